"""Loading references and kernels as fresh modules, cached by file identity.

A reference is imported under a unique name with its directory on ``sys.path`` while it loads,
and kept in the worker's registry keyed by (path, mtime, size) so repeated requests on an
unchanged file do not import it again. Candidate kernels are never imported here: they run in
their own sandboxed child (candidate.py, child.py); ``file_key``/``sibling_key`` give a
candidate's identity (its file and the files next to it: a rebuilt library is another candidate).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Any, Callable, List, Optional, Tuple

import torch.nn as nn

from .protocol import BUILD_ERROR, RUNTIME_ERROR, HarnessError

# At most this many modules stay cached; the least recently used one is dropped first.
MAX_CACHED_MODULES = 64
# Lines of traceback a build error carries.
TRACEBACK_TAIL_LINES = 12
_SIBLING_EXTS = (".so", ".py", ".dylib", ".ptx", ".cubin")


@dataclass
class Reference:
    path: str
    module: ModuleType
    model_class: type
    get_inputs: Callable[[], Any]
    get_init_inputs: Callable[[], Any]
    get_inputs_dyn_list: Optional[Callable[[], Any]]


def file_key(path: str) -> Tuple[str, int, int]:
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size)


def sibling_key(path: str) -> Tuple[Tuple[str, int, int], ...]:
    directory = os.path.dirname(path)
    keys: List[Tuple[str, int, int]] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_file() and entry.name.endswith(_SIBLING_EXTS):
                    st = entry.stat()
                    keys.append((entry.name, st.st_mtime_ns, st.st_size))
    except OSError:
        pass
    return tuple(sorted(keys))


def exception_site(exc: BaseException, path: str) -> Optional[int]:
    """The line in ``path`` closest to where ``exc`` arose, or None when it did not pass there."""
    line: Optional[int] = None
    real = os.path.realpath(path)
    tb: Optional[TracebackType] = exc.__traceback__
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == real:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename:
        if os.path.realpath(exc.filename) == real:
            line = exc.lineno
    return line


def describe_exception(what: str, exc: BaseException, path: str) -> Tuple[str, Optional[int]]:
    """"get_inputs() raised ValueError: msg (ref.py:12)" and the line number."""
    line = exception_site(exc, path)
    message = str(exc).strip()
    text = f"{what} raised {type(exc).__name__}"
    if message:
        text += f": {message}"
    if line is not None:
        text += f" ({os.path.basename(path)}:{line})"
    return text, line


def traceback_tail(exc: BaseException, lines: int = TRACEBACK_TAIL_LINES) -> str:
    """The end of the traceback, without the harness's and importlib's own frames."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(here) and not f.filename.startswith("<frozen")]
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    return "\n".join(text.rstrip().splitlines()[-lines:])


def require_file(path: Any, role: str, where: str, error_class: str) -> str:
    if not isinstance(path, str) or not path:
        raise HarnessError(RUNTIME_ERROR, f"request has no {role} path")
    if not os.path.isabs(path):
        raise HarnessError(RUNTIME_ERROR, f"{role} path must be absolute: {path}")
    if not os.path.isfile(path):
        raise HarnessError(error_class, f"{role} file not found: {path}", where=where)
    return path


class Registry:
    """The worker's module cache. Owns the modules it loads; they live until evicted."""

    def __init__(self, capacity: int = MAX_CACHED_MODULES) -> None:
        self._capacity = capacity
        self._modules: "OrderedDict[Any, ModuleType]" = OrderedDict()
        self._counter = 0

    def __len__(self) -> int:
        return len(self._modules)

    def _import(self, path: str, prefix: str, sys_path_first: bool) -> ModuleType:
        self._counter += 1
        name = f"_akg_{prefix}_{self._counter}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        directory = os.path.dirname(path)
        sys.modules[name] = module
        if sys_path_first:
            sys.path.insert(0, directory)
        else:
            sys.path.append(directory)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        finally:
            try:
                sys.path.remove(directory)
            except ValueError:
                pass
        return module

    def _cached(self, key: Any, load: Callable[[], ModuleType]) -> ModuleType:
        module = self._modules.get(key)
        if module is not None:
            self._modules.move_to_end(key)
            return module
        module = load()
        self._modules[key] = module
        while len(self._modules) > self._capacity:
            _, old = self._modules.popitem(last=False)
            sys.modules.pop(old.__name__, None)
        return module

    def load_reference(self, path: Any) -> Reference:
        path = require_file(path, "reference", "reference", RUNTIME_ERROR)
        key = ("reference",) + file_key(path)
        try:
            module = self._cached(key, lambda: self._import(path, "ref", sys_path_first=False))
        except HarnessError:
            raise
        except BaseException as exc:  # noqa: BLE001 - user code may raise anything
            detail, line = describe_exception(f"importing {os.path.basename(path)}", exc, path)
            raise HarnessError(RUNTIME_ERROR, detail, where="reference", line=line) from None
        return check_reference(module, path)


def check_reference(module: ModuleType, path: str) -> Reference:
    """Checks KernelBench form and names exactly what is missing."""
    model_class = getattr(module, "Model", None)
    if not (inspect.isclass(model_class) and issubclass(model_class, nn.Module)):
        raise HarnessError(RUNTIME_ERROR, "reference has no class Model(nn.Module)", where="reference")
    get_inputs = getattr(module, "get_inputs", None)
    if not callable(get_inputs):
        raise HarnessError(RUNTIME_ERROR, "reference has no get_inputs()", where="reference")
    get_init_inputs = getattr(module, "get_init_inputs", None)
    if not callable(get_init_inputs):
        raise HarnessError(RUNTIME_ERROR, "reference has no get_init_inputs()", where="reference")
    dyn = getattr(module, "get_inputs_dyn_list", None)
    return Reference(path=path, module=module, model_class=model_class, get_inputs=get_inputs,
                     get_init_inputs=get_init_inputs, get_inputs_dyn_list=dyn if callable(dyn) else None)


def call_user(what: str, where: str, path: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Calls user code; any exception becomes a runtime_error pointing into ``path``."""
    try:
        return fn(*args)
    except HarnessError:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit from user code must not end the worker
        if isinstance(exc, KeyboardInterrupt):
            raise
        detail, line = describe_exception(what, exc, path)
        raise HarnessError(RUNTIME_ERROR, detail, where=where, line=line,
                           file=path if where == "kernel" else None) from None
