#!/usr/bin/env python3
"""Checks the worked examples of the DocSpec skills (docspecs/<dsl>/*.md).

An example is a fenced block whose info string is a language followed by the word
`example` (```cpp example). Each is checked where its runtime exists on this machine:

- cpp: compiled into a shared library with g++ (the cpu/cpp backend's flags);
- cuda: compiled with nvcc ($AKG_NVCC, nvcc on PATH, else the pinned one in .venv-nvcc),
  skipped with a message when there is none;
- python in triton_cuda: run as a script under TRITON_INTERPRET=1 with the PyTorch 2 + Triton
  interpreter ($AKG_TORCH2_PYTHON, else .venv-torch2/bin/python), skipped with a message
  when it is missing; the example's own asserts compare it with PyTorch;
- python in tilelang_cuda and triton_ascend: parsed only (TileLang and Triton-Ascend do not
  run here: no NVIDIA GPU with TileLang, no Ascend NPU).

Every skill folder must hold at least one example. Exit status 0 when every check that could
run passed, 1 otherwise; each failure names the file and the line of the block.
"""
import ast
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 240
FENCE = re.compile(r"^(```+|~~~+)\s*([A-Za-z0-9_+-]*)(.*)$")


def examples(path):
    """(line, lang, body) of every example block in the file."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        fence, lang, rest = m.group(1), m.group(2).lower(), m.group(3).split()
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * 3):
            j += 1
        if "example" in rest:
            out.append((start, lang, "\n".join(lines[start:j]) + "\n"))
        i = j + 1
    return out


def find_nvcc():
    given = os.environ.get("AKG_NVCC")
    if given:
        return given if os.access(given, os.X_OK) else None
    found = shutil.which("nvcc")
    if found:
        return found
    pinned = sorted(glob.glob(os.path.join(ROOT, ".venv-nvcc", "lib", "python3*", "site-packages",
                                           "nvidia", "cu*", "bin", "nvcc")))
    return pinned[-1] if pinned and os.access(pinned[-1], os.X_OK) else None


def torch2_python():
    given = os.environ.get("AKG_TORCH2_PYTHON") or os.path.join(ROOT, ".venv-torch2", "bin", "python")
    if not os.access(given, os.X_OK):
        return None
    probe = subprocess.run([given, "-c", "import torch, triton"], capture_output=True, timeout=TIMEOUT)
    return given if probe.returncode == 0 else None


def run(cmd, cwd, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"ran past {TIMEOUT} s: {' '.join(cmd)}"
    if p.returncode != 0:
        return (p.stdout + p.stderr).strip()[-3000:] or f"exit status {p.returncode}"
    return None


RUNNER = """
import json, runpy, sys, traceback
for where, path in json.loads(sys.argv[1]):
    try:
        runpy.run_path(path, run_name="__main__")
        err = None
    except BaseException:
        err = traceback.format_exc()[-3000:]
    print("AKG-EXAMPLE " + json.dumps([where, err]), flush=True)
"""


def run_triton(py2, runs, work):
    """{where: None or the error} for each Triton example, all run by one interpreter."""
    import json

    env = dict(os.environ, TRITON_INTERPRET="1")
    try:
        p = subprocess.run([py2, "-c", RUNNER, json.dumps(runs)], cwd=work, env=env,
                           capture_output=True, text=True, timeout=TIMEOUT)
        out, tail = p.stdout, (p.stdout + p.stderr)[-3000:]
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        tail = f"ran past {TIMEOUT} s"
    results = {}
    for line in out.splitlines():
        if line.startswith("AKG-EXAMPLE "):
            where, err = json.loads(line[len("AKG-EXAMPLE "):])
            results[where] = err
    for where, _ in runs:
        results.setdefault(where, f"did not finish: {tail}")
    return results


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(ROOT, "docspecs")
    nvcc, py2 = find_nvcc(), None
    py2_checked = False
    failures, checked, skipped = [], 0, []
    triton_runs = []  # (where, file): run together, in one interpreter (torch imports once)
    work = tempfile.mkdtemp(prefix="akg-docspecs-")
    try:
        for folder in sorted(glob.glob(os.path.join(root, "*", ""))):
            dsl = os.path.basename(os.path.dirname(folder))
            files = sorted(f for f in glob.glob(os.path.join(folder, "*.md"))
                           if os.path.basename(f).lower() != "readme.md")
            found = 0
            for path in files:
                rel = os.path.relpath(path, os.path.dirname(root))
                for n, (line, lang, body) in enumerate(examples(path)):
                    found += 1
                    where = f"{rel}:{line}"
                    base = os.path.join(work, f"{dsl}_{os.path.basename(path)[:-3]}_{n}")
                    err = None
                    if lang in ("cpp", "c++"):
                        with open(base + ".cpp", "w") as f:
                            f.write(body)
                        err = run(["g++", "-O2", "-fopenmp", "-shared", "-fPIC", "-std=c++17", "-Wall",
                                   "-Werror", "-o", base + ".so", base + ".cpp"], work)
                    elif lang in ("cuda", "cu"):
                        if not nvcc:
                            skipped.append(f"{where}: no nvcc (scripts/setup.sh test installs one in .venv-nvcc)")
                            continue
                        with open(base + ".cu", "w") as f:
                            f.write(body)
                        err = run([nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                                   "-arch=sm_90", "-o", base + ".so", base + ".cu"], work)
                    elif lang == "python" and dsl == "triton_cuda":
                        if not py2_checked:
                            py2, py2_checked = torch2_python(), True
                        if not py2:
                            skipped.append(f"{where}: no PyTorch 2 + Triton interpreter "
                                           "(.venv-torch2: scripts/setup.sh torch2)")
                            continue
                        with open(base + ".py", "w") as f:
                            f.write(body)
                        triton_runs.append((where, base + ".py"))
                        continue
                    elif lang == "python":
                        try:
                            ast.parse(body, filename=where)
                        except SyntaxError as e:
                            err = f"does not parse: line {e.lineno}: {e.msg}"
                        else:
                            skipped.append(f"{where}: parsed only ({dsl}'s runtime does not exist here)")
                    else:
                        err = f"an example in '{lang}', which this check does not know (cpp, cuda, python)"
                    if err:
                        failures.append(f"{where}: error: the {lang} example fails:\n{err}")
                    else:
                        checked += 1
            if not found:
                failures.append(f"{os.path.relpath(folder, os.path.dirname(root))}: error: no example "
                                "(a block opened with ```<lang> example)")
        if triton_runs:
            results = run_triton(py2, triton_runs, work)
            for where, _ in triton_runs:
                err = results.get(where, "did not run (the interpreter stopped before it)")
                if err:
                    failures.append(f"{where}: error: the python example fails under TRITON_INTERPRET=1:\n{err}")
                else:
                    checked += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for s in skipped:
        print(f"skipped or partial: {s}")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{checked} examples checked, {len(skipped)} skipped or parsed only, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
