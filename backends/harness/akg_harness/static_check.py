"""The static check of a candidate kernel: it computes its result itself and calls no library compute.

The judge runs this before it loads a candidate. It reads the candidate's folder (the kernel file's
folder holds only the candidate's files) and never imports or runs any of it. It is the only check
that the kernel does its compute itself: the candidate then runs in its own sandboxed child, where
no hook of the judge's could be trusted. It refuses, before anything runs, imports of other
libraries, torch internals, code built at run time, ctypes tricks, native code linked against torch
or a BLAS.

Python (the kernel file and the ``.py`` files of its folder it imports, transitively: a file
nothing imports never runs), by whitelist: what is not understood is refused.

* Imports: ``__future__``, ``ctypes``, ``os``, ``os.path``, ``math``, ``typing``, ``functools``,
  ``torch``, ``torch.nn``, ``triton``, ``triton.language`` (and its device libraries, usable only
  inside ``@triton.jit``), and the ``.py`` files beside the kernel, by name. No relative or star
  imports (``from math import *`` and ``from typing import *`` excepted).
* Module attributes are resolved through the import aliases and checked against per-module
  lists (``static_names.py``). ``torch``: the calls of ``sandbox.ALLOWED_CALLS`` (but
  ``tolist``), dtype names, ``dtype``, ``device``, ``Tensor``, ``Size``, ``no_grad``, ``finfo``,
  ``iinfo``, memory formats, ``nn.Module``, ``nn.Parameter``, ``nn.ModuleList`` and a few
  ``torch.cuda`` queries. A module may be used only through its attributes, never as a value
  (``T = torch`` would hide what is used), and nothing of a library may be assigned to.
* An nn.Module's constructor (``__init__``) builds weights: akg's own glue rebuilds the reference's
  constructor statement for statement (``nn.Parameter(torch.randn(64) * 0.1)``, ``nn.Conv2d(...)``)
  so that ModelNew draws what Model draws. There, calls of torch's tensor operators
  (``torch._C._VariableFunctions`` but ``from_file``/``from_numpy``; ``manual_seed``), of
  ``torch.nn`` layer and parameter classes and of ``torch.nn.init`` are allowed, and tensor
  methods and operators are not checked. The constructor sees only the constructor's arguments,
  never forward's inputs, and the verifier copies the reference's weights over them anyway. A
  layer it builds only holds weights: calling it (``self.conv(x)``) anywhere is refused. (A
  module built inside forward is checked by the rules of forward: its constructor's calls too.)
* Tensor methods: a call ``r.m(...)`` whose name is a method of ``torch.Tensor`` outside
  ``ALLOWED_CALLS`` is refused whatever ``r`` is (the AST cannot know types), and ``tolist``
  too (the "pure Python through tolist()" cheat); ``self.m(...)`` of the class's own method is
  not. Python's own methods that share a name with a Tensor method and that glue calls
  (``PY_METHOD_NAMES``: ``add``, ``sort``, ``values``, ``index``...; today only ``add``,
  ``sort``, ``values`` and, with PyTorch 2, ``index`` collide) are let through unless the
  receiver is known to be a tensor.
* Operators (``+ - * / // % ** @ & | ^ ~ << >>``, comparisons, ``in``, augmented assignments)
  and the builtins ``abs sum min max round pow divmod sorted reversed any all`` on a value known
  to be a tensor are refused. "Known" is a light, flow-insensitive dataflow per function:
  forward's parameters (but ``self``, and those with a number as default or annotated ``int``,
  ``float``, ``bool`` or ``str``: the finding says so), names
  bound from torch's tensor calls, from a tensor's methods, views or items, and ``self.<name>``
  bound from tensors, ``nn.Parameter`` or ``register_buffer``. Sizes (``x.shape[0]``,
  ``x.size()``) are ints, so arithmetic on them is fine. This part is best effort: a helper
  function that receives tensors from elsewhere and applies operators to them is not seen
  (README.md, "Sandbox": what is not restricted).
* Never: ``exec eval compile __import__ globals locals vars open breakpoint input`` (unless the
  file binds the name itself and never deletes it); ``getattr``
  with a computed name (with a literal one it is the attribute access it spells);
  ``setattr``/``delattr`` on modules; dunder attributes but ``__file__``, ``__init__``,
  ``__name__``; frame and code attributes (``gi_frame``, ``f_globals``...); special methods that
  hook torch or attribute lookup (``__torch_function__``, ``__getattr__``...); ``type(x)`` other
  than to read its name or compare it.
* ctypes: the plain type names and helpers, and loading a library only as
  ``ctypes.CDLL(path)``/``ctypes.cdll.LoadLibrary(path)`` of a path built from ``__file__`` and a
  literal naming a file of the folder (``os.path.join(os.path.dirname(os.path.abspath(__file__)),
  "k.so")``, also through names bound once that way). ``CDLL(None)``, a library by name,
  ``pythonapi``, ``PyDLL``, ``cast``, ``memmove``, ``memset``, ``string_at``, ``addressof``,
  ``CFUNCTYPE``, ``from_address`` and the rest are refused.
* Triton: inside a function decorated ``@triton.jit`` (under ``triton.autotune``/``heuristics``)
  ``tl.*`` is allowed and the torch rules do not apply; outside, ``triton.jit``, ``autotune``,
  ``heuristics``, ``Config``, ``cdiv``, ``next_power_of_2``, ``tl.constexpr`` and Triton dtypes,
  and launches ``kernel[grid](...)``; ``kernel.fn`` (the plain Python function) is refused.

Folder: the check sees what the judge stages for the child (regular files three levels deep, no
links, hidden folders or ``__pycache__``). Compiled Python (``.pyc``: Python could run it instead
of checked source), files Python would import instead of a checked ``.py`` (``X/`` or ``X.so``
beside ``X.py``) and modules named like installed ones (``torch.py``, ``numpy.py``) are refused.

Native code: every ELF file (by its magic bytes, whatever its name) is parsed here with
``struct``: the dynamic segment (as the loader reads it, plus the section headers where present)
gives the libraries it asks for and its undefined symbols. Refused: torch, Python, BLAS, LAPACK,
oneDNN, MKL, cuBLAS-family libraries and Python extension modules, symbols of their APIs and the
Fortran BLAS/LAPACK names, and run-time loading (``dlopen``, ``dlsym``, ``dl_iterate_phdr``...: it
could reach torch); the lists are in ``static_elf.py``. Only 64-bit little-endian ELF is accepted;
a malformed one is refused with what is wrong, never with a Python traceback.

Limits keep the check short whatever the folder holds (2000 files, 4 MB a Python file, 8 MB of
Python, a budget of ELF reads); past them the candidate is refused. The check of a
typical generated folder (a glue file and its ``.so``) takes a few milliseconds.

Files: this module (the API and the folder), ``static_names.py`` (the vocabulary: what each name
may do), ``static_python.py`` (the walk over a Python file), ``static_elf.py`` (native code).

``check_candidate`` returns findings (empty: passes); ``raise_first`` turns the first into the
judge's ``forbidden`` error (``build_error`` for a file that does not parse).
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import stat
import sys
from typing import Dict, List, Optional, Set, Tuple

from .protocol import BUILD_ERROR, FORBIDDEN, HarnessError
from .static_elf import ElfBudget, check_elf, is_elf
from .static_names import finding
from .static_python import FileCheck

_MAX_ENTRIES = 2000  # files
_MAX_DEPTH = 3  # levels of folders staged for the child, the kernel's own the first
_MAX_PY_BYTES = 4 << 20  # one file
_MAX_PY_TOTAL = 8 << 20  # all the folder's Python
_MAX_FINDINGS = 100


# ---------------------------------------------------------------------------------------------
# Public API

def check_candidate(kernel_path: str) -> List[dict]:
    """Findings for the candidate whose kernel file is ``kernel_path`` (empty: it passes).

    A finding is {"file": name in the folder, "line": int or None, "construct": str, "detail": str,
    "path": absolute path} and, for a file that does not parse, "class": "build_error".
    """
    kernel = os.path.abspath(kernel_path)
    folder = os.path.dirname(kernel)
    findings: List[dict] = []
    try:
        st = os.lstat(kernel)
    except OSError as exc:
        return [finding(folder, os.path.basename(kernel), None, "missing file",
                        f"{os.path.basename(kernel)}: the kernel file cannot be read ({exc.strerror})",
                        error_class=BUILD_ERROR)]
    if not stat.S_ISREG(st.st_mode):
        return [finding(folder, os.path.basename(kernel), None, "not a file",
                        f"{os.path.basename(kernel)} is not a plain file: the kernel must be a Python file "
                        "of its own folder")]
    py_files, elf_files = _scan_folder(folder, findings)
    modules = {n[:-3] for n in py_files}
    tables: Dict[str, Dict[str, str]] = {}
    trees: Dict[str, ast.Module] = {}
    queue = [os.path.basename(kernel)]
    total = 0
    while queue:  # the kernel file, then the files of its folder it imports, transitively
        name = queue.pop(0)
        if name in trees:
            continue
        total += os.path.getsize(os.path.join(folder, name))
        if total > _MAX_PY_TOTAL:
            findings.append(finding(folder, name, None, "too much Python",
                                    f"the kernel and the files it imports hold more than {_MAX_PY_TOTAL >> 20} MB "
                                    "of Python: too much for a kernel's glue"))
            break
        tree = _parse(folder, name, findings)
        if tree is None:
            continue
        trees[name] = tree
        tables[os.path.splitext(name)[0]] = {}
        queue.extend(f"{m}.py" for m in sorted(_sibling_imports(tree, modules)) if f"{m}.py" not in trees)
    checkers = [FileCheck(folder, name, tree, modules, tables) for name, tree in trees.items()]
    for checker in checkers:
        checker.read_imports()
    for checker in checkers:
        checker.run()
        findings.extend(sorted(checker.findings, key=lambda f: f["line"] or 0))
    budget = ElfBudget()
    for name in elf_files:
        findings.extend(check_elf(folder, name, budget))
    return _dedupe(findings)[:_MAX_FINDINGS]


def _sibling_imports(tree: ast.Module, modules: Set[str]) -> Set[str]:
    """The files of the folder a module imports (import helper, from helper import x)."""
    out: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module in modules:
            out.add(node.module)
    return out


def raise_first(findings: List[dict]) -> None:
    """Raise the judge's error for findings[0]; nothing when there is none."""
    if not findings:
        return
    first = findings[0]
    raise HarnessError(first.get("class", FORBIDDEN), first["detail"], where="kernel", line=first.get("line"),
                       file=first.get("path"))


def _dedupe(findings: List[dict]) -> List[dict]:
    seen: Set[Tuple[str, Optional[int], str]] = set()
    out = []
    for f in findings:
        key = (f["file"], f["line"], f["construct"])
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# ---------------------------------------------------------------------------------------------
# The folder

def _installed(name: str) -> bool:
    """True when ``import name`` finds something outside the candidate's folder."""
    if name in sys.builtin_module_names or name in getattr(sys, "stdlib_module_names", ()):
        return True
    try:
        return importlib.machinery.PathFinder.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _scan_folder(folder: str, findings: List[dict]) -> Tuple[List[str], List[str]]:
    """(top-level .py names, ELF paths relative to the folder); layout findings appended.

    It sees what the judge stages for the child (candidate.py): regular files, three levels deep,
    neither links nor hidden folders nor ``__pycache__``."""
    py_files: List[str] = []
    elf_files: List[str] = []
    top_dirs: Set[str] = set()
    top_ext: Set[str] = set()
    entry_of: Dict[str, str] = {}  # importable name -> the entry that provides it
    count = 0
    stack = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        try:
            entries = sorted(os.scandir(os.path.join(folder, rel_dir)), key=lambda e: e.name)
        except OSError as exc:
            findings.append(finding(folder, rel_dir or ".", None, "unreadable folder",
                                    f"{rel_dir or 'the kernel folder'} cannot be read ({exc.strerror})"))
            continue
        for entry in entries:
            rel = os.path.join(rel_dir, entry.name)
            try:
                st = os.lstat(entry.path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name.startswith(".") or entry.name == "__pycache__":
                    continue
                if depth == 0:
                    top_dirs.add(entry.name)
                    entry_of.setdefault(entry.name, entry.name)
                if depth < _MAX_DEPTH - 1:
                    stack.append((rel, depth + 1))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue  # links and special files are not staged
            count += 1
            if count > _MAX_ENTRIES:
                findings.append(finding(folder, rel, None, "too many files",
                                        f"the kernel folder holds more than {_MAX_ENTRIES} files: a candidate "
                                        "folder holds only the candidate's own files"))
                return py_files, elf_files
            if entry.name.endswith((".pyc", ".pyo")):
                findings.append(finding(folder, rel, None, "compiled Python",
                                        f"{rel} is compiled Python: Python could run it instead of checked "
                                        "source; ship only .py files"))
                continue
            if depth == 0:
                if entry.name.endswith(".py"):
                    py_files.append(entry.name)
                    entry_of[entry.name[:-3]] = entry.name
                for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                    if entry.name.endswith(suffix):
                        top_ext.add(entry.name[: -len(suffix)])
                        entry_of.setdefault(entry.name[: -len(suffix)], entry.name)
                        break
            if is_elf(entry.path):
                elf_files.append(rel)
    stems = {n[:-3] for n in py_files}
    for name in sorted(stems | top_dirs | top_ext):
        if name.isidentifier() and _installed(name):
            findings.append(finding(folder, entry_of[name], None, name,
                                    f"the kernel folder holds {entry_of[name]}, which has the name of an installed "
                                    "Python module: an import of that module could load the candidate's file "
                                    "instead; rename it"))
    for name in sorted(stems & (top_dirs | top_ext)):
        findings.append(finding(folder, name + ".py", None, name,
                                f"beside {name}.py the kernel folder holds another module {name!r} (a folder or "
                                "a Python extension) that Python would import instead; rename one of them"))
    return py_files, elf_files


def _parse(folder: str, name: str, findings: List[dict]) -> Optional[ast.Module]:
    path = os.path.join(folder, name)
    try:
        with open(path, "rb") as f:
            source = f.read(_MAX_PY_BYTES + 1)
    except OSError as exc:
        findings.append(finding(folder, name, None, "unreadable file", f"{name} cannot be read ({exc.strerror})",
                                error_class=BUILD_ERROR))
        return None
    if len(source) > _MAX_PY_BYTES:
        findings.append(finding(folder, name, None, "file too large",
                                f"{name} is larger than {_MAX_PY_BYTES >> 20} MB: too large for a kernel's glue"))
        return None
    try:
        return ast.parse(source, filename=name)
    except SyntaxError as exc:
        line = exc.lineno
        where = f"{name} line {line}" if line else name
        findings.append(finding(folder, name, line, "syntax error",
                                f"{where}: the file does not parse (SyntaxError: {exc.msg})",
                                error_class=BUILD_ERROR))
    except (ValueError, RecursionError, MemoryError) as exc:
        findings.append(finding(folder, name, None, "syntax error",
                                f"{name}: the file does not parse ({type(exc).__name__}: {exc})",
                                error_class=BUILD_ERROR))
    return None


# ---------------------------------------------------------------------------------------------
