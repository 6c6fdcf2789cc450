"""The candidate's side of the judge: what runs inside the sandboxed child (README.md, "Judge and child").

One child serves one candidate and is never given another. It imports torch, maps the input region
the judge passes (a memfd the judge writes every call's inputs into, sealed so that the child can
map it read-only only: a kernel writing an input faults), answers the judge's
calibration calls, then loads the candidate once and runs its ``forward`` on the judge's command.
The judge times the reference the same way, in a child of its own that loads ``Model`` instead of
``ModelNew`` (``"cls": "Model"``), so both sides are timed by one protocol in the same kind of
process, on inputs written the same way.
Nothing here is trusted by the judge: once the candidate is imported it may have replaced any of
this code. The judge trusts only what it sees itself: the bytes at the outputs' addresses in this
process's memory, read by the judge (``process_vm_readv``) when the child says it is done; the time
between its own "go" and that answer; the inputs' bytes afterwards; and the CPU time the kernel
accounts to the child's cgroup.

Outputs stay where the kernel allocated them (its own ``torch.empty``, no copy, no interception):
the "done" line carries their addresses, computed inside the timed batch; a non-contiguous output
is made contiguous there (charged to the kernel), a GPU output copied to the host there. Shapes,
dtypes and plain values follow in a second line, after the judge has read the bytes. The outputs
of a batch stay referenced until the next command, so their memory is not reused meanwhile.

Wire format (judge -> child, on stdin): a JSON line, followed by ``blob`` raw bytes when the line
says so (a pickle: the judge is trusted, the child unpickles). Child -> judge (a private copy of
descriptor 1): JSON lines only, never a pickle (the judge must not unpickle what a candidate wrote).
"""

from __future__ import annotations

import gc
import importlib.util
import inspect
import json
import mmap
import os
import pickle
import sys
import warnings
from typing import Any, Callable, Dict, IO, List, Optional

import torch
import torch.nn as nn

from .inputs import flatten_outputs
from .loading import describe_exception, exception_site, traceback_tail

TENSOR_MARK = "__akg_tensor__"
_ITEMSIZE: Dict[torch.dtype, int] = {}


def _itemsize(dtype: torch.dtype) -> int:
    size = _ITEMSIZE.get(dtype)
    if size is None:
        size = torch.empty((), dtype=dtype).element_size()
        _ITEMSIZE[dtype] = size
    return size


class Child:
    """The child's state: regions, the candidate's model, the answer stream."""

    def __init__(self, answers: IO[str], in_fd: int, device: torch.device) -> None:
        self.answers = answers
        self.in_fd = in_fd
        self.device = device
        self.in_mm: Optional[mmap.mmap] = None
        self.in_u8: Optional[torch.Tensor] = None
        self.held: List[Any] = []  # the last batch's outputs, alive until the next command
        self.model: Optional[Callable[..., Any]] = None
        self.kernel_path = ""
        self.stdin = sys.stdin.buffer
        # on a GPU, a device copy of the input region's windows (the judge's generation of them):
        # a profile's calls take their inputs from it device to device, not each from the host
        self.mirror: Optional[torch.Tensor] = None
        self.mirror_gen = -1
        self.mirrored = False

    def send(self, obj: Dict[str, Any]) -> None:
        self.answers.write(json.dumps(obj, separators=(",", ":"), allow_nan=True) + "\n")
        self.answers.flush()

    def remap(self, in_size: int) -> None:
        """Maps the judge's input region read-only (it is sealed: nothing else is possible)."""
        self.in_u8 = None
        self.in_mm = mmap.mmap(self.in_fd, in_size, prot=mmap.PROT_READ) if in_size > 0 else None
        if self.in_mm is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "the buffer is not writable": by design
                self.in_u8 = torch.frombuffer(self.in_mm, dtype=torch.uint8)

    def _arg(self, value: Any) -> Any:
        if isinstance(value, tuple) and len(value) == 5 and value[0] == TENSOR_MARK:
            _, off, dtype, shape, _device = value
            assert self.in_u8 is not None
            nbytes = _itemsize(dtype)
            for s in shape:
                nbytes *= s
            if self.mirrored and self.mirror is not None and off + nbytes <= self.mirror.numel():
                # a fresh device tensor per call, copied from the device's copy of the windows
                # (what the kernel writes into it reaches no other call)
                return self.mirror[off:off + nbytes].view(dtype).view(shape).clone()
            t = self.in_u8[off:off + nbytes].view(dtype).view(shape)
            # every input goes to this child's device, as the judge's reference gets it on its own
            # (the judge draws inputs on the host; the mark's device is where they were drawn)
            return t if self.device.type == "cpu" else t.to(self.device)
        if isinstance(value, list):
            return [self._arg(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._arg(v) for v in value)
        return value

    def mirror_for(self, mirror: Any) -> None:
        """On a GPU, for a call whose inputs are windows of the region (``mirror``: the judge's
        generation of the windows and the bytes they span), the device copy of those bytes, made
        once a generation: a profile's batches then copy each call's inputs device to device. On a
        CPU, or for other calls, inputs come from the region itself."""
        self.mirrored = False
        if self.device.type == "cpu" or self.in_u8 is None:
            return
        if not (isinstance(mirror, list) and len(mirror) == 2 and all(isinstance(v, int) for v in mirror)):
            self.mirror, self.mirror_gen = None, -1
            return
        gen, top = mirror
        if top <= 0 or top > self.in_u8.numel():
            return
        if gen != self.mirror_gen or self.mirror is None or self.mirror.numel() < top:
            self.mirror = None  # the old copy's memory goes back first
            self.mirror = self.in_u8[:top].to(self.device)
            self.mirror_gen = gen
        self.mirrored = True

    def load(self, req: Dict[str, Any], blob: bytes) -> Dict[str, Any]:
        path = req["kernel"]
        self.kernel_path = path
        payload = pickle.loads(blob)
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        # the reference child loads one reference after another from the same folder: what an
        # earlier one imported from there is forgotten
        for name, module in list(sys.modules.items()):
            origin = getattr(module, "__file__", None) or ""
            if origin.startswith(directory + os.sep):
                del sys.modules[name]
        importlib.invalidate_caches()
        self.model = None
        try:
            spec = importlib.util.spec_from_file_location("_akg_candidate", path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules["_akg_candidate"] = module
            spec.loader.exec_module(module)
        except BaseException as exc:  # noqa: BLE001 - the candidate may raise anything
            line = exception_site(exc, path)
            detail = f"importing {os.path.basename(path)} failed: {type(exc).__name__}: {exc}\n{traceback_tail(exc)}"
            return {"ok": False, "class": "build_error", "detail": detail, "line": line}
        name = "Model" if req.get("cls") == "Model" else "ModelNew"  # Model: the judge's reference child
        model_class = getattr(module, name, None)
        if not (inspect.isclass(model_class) and issubclass(model_class, nn.Module)):
            return {"ok": False, "class": "build_error",
                    "detail": f"kernel {os.path.basename(path)} has no class {name}(nn.Module)"}
        try:
            torch.manual_seed(int(req.get("seed", 0)))
            model = model_class(*payload["init"])
            model = model.to(self.device)
            own = model.state_dict()
            shared = {k: v.to(self.device) for k, v in payload["state"].items()
                      if k in own and own[k].shape == v.shape}
            model.load_state_dict(shared, strict=False)
        except BaseException as exc:  # noqa: BLE001
            detail, line = describe_exception(f"{name}(*get_init_inputs())", exc, path)
            return {"ok": False, "class": "runtime_error", "detail": detail, "line": line}
        self.model = model
        return {"ok": True}

    def place(self, out: Any) -> List[Any]:
        """Inside the timed batch: the outputs as the judge can read them (contiguous, on the host)."""
        if type(out) is torch.Tensor and out.is_contiguous() and out.device.type == "cpu":
            return [out]
        placed: List[Any] = []
        for value in flatten_outputs(out):
            if isinstance(value, torch.Tensor):
                if value.device.type != "cpu":
                    value = value.detach().to("cpu")
                elif not value.is_contiguous():
                    value = value.contiguous()
            placed.append(value)
        return placed

    @staticmethod
    def describe(placed: List[Any]) -> List[Dict[str, Any]]:
        """After "done": what each output is."""
        descs: List[Dict[str, Any]] = []
        for value in placed:
            if isinstance(value, torch.Tensor):
                descs.append({"t": "tensor", "dtype": str(value.dtype).replace("torch.", ""),
                              "shape": list(value.shape)})
            elif value is None or isinstance(value, (bool, int, float, str)):
                descs.append({"t": "value", "v": value})
            else:
                descs.append({"t": "other", "v": repr(value)[:200]})
        return descs

    def call(self, req: Dict[str, Any], blob: bytes) -> None:
        """A batch: every argument set of the blob, back to back. With ``settle`` n, the first n
        sets run after a first "go" (answered "settled"), the rest after a second "go" (answered
        "done"): the judge times the second part only, as the first call of a block absorbs what
        ran before it. The settling calls' outputs are let go as soon as each returns (they are
        neither timed nor read: no pointers, no descriptions), so the first timed call writes
        into the memory the settling call just wrote, as a caching allocator hands an operator
        the block its predecessor freed; the timed calls' outputs stay alive until the next
        command, for the judge to read any of them."""
        self.held = []
        try:
            self.mirror_for(req.get("mirror"))
            batch = [self._arg(structure) for structure in pickle.loads(blob)] if blob else [[]]
        except (RuntimeError, MemoryError) as exc:  # the device out of memory for the inputs, say
            self.send({"ready": False, "class": "runtime_error",
                       "detail": f"placing the inputs on {self.device} failed: {type(exc).__name__}: {exc}"})
            return
        null = bool(req.get("null"))
        settle = int(req.get("settle") or 0)
        model = self.model
        if model is None and not null:
            self.send({"ready": False, "class": "runtime_error", "detail": "no kernel loaded"})
            return
        self.send({"ready": True})
        placed: List[List[Any]] = []
        for part, answer in ((batch[:settle], "settled"), (batch[settle:], "done")):
            if not part and answer == "settled":
                continue
            go = self.stdin.readline()
            if not go:
                sys.exit(0)
            try:
                if null:
                    for args in part:
                        placed.append([torch.empty_like(args[0])])
                elif self.device.type == "cuda":
                    # on a GPU the outputs stay on the device until the timed part is over; their
                    # copy to the host follows "done", timed by the judge on its own ("copied")
                    assert model is not None
                    for args in part:
                        if answer == "settled":
                            model(*args)
                            placed.append([])
                        else:
                            placed.append([model(*args)])
                    torch.cuda.synchronize(self.device)
                else:
                    assert model is not None
                    for args in part:
                        if answer == "settled":
                            model(*args)  # freed here: the next call's output takes its memory
                            placed.append([])
                        else:
                            placed.append(self.place(model(*args)))
                copied: Optional[set] = None
                if self.device.type == "cuda" and answer == "done" and not null:
                    # the judge names the calls whose outputs it reads (the checked ones, or one):
                    # only those reach the host; the others stay on the device, described alone
                    self.send({"done": True, "copy": True})
                    want = json.loads(self.stdin.readline() or "{}").get("copy")
                    copied = {int(b) for b in want or [] if 0 <= int(b) < len(placed)}
                    placed = [(self.place(outs[0]) if i in copied else list(flatten_outputs(outs[0]))) if outs else []
                              for i, outs in enumerate(placed)]
                    torch.cuda.synchronize(self.device)
                    answer = "copied"
                ptrs = [[v.data_ptr() if isinstance(v, torch.Tensor) and (copied is None or i in copied) else 0
                         for v in outs] for i, outs in enumerate(placed)]
            except BaseException as exc:  # noqa: BLE001
                if isinstance(exc, KeyboardInterrupt):
                    raise
                detail, line = describe_exception("ModelNew.forward", exc, self.kernel_path)
                self.send({"done": False, "class": "runtime_error", "detail": detail, "line": line})
                return
            if answer == "settled":
                self.send({"settled": True})
        self.send({"done": True, "ptrs": ptrs})
        self.held = placed
        self.send({"outs": [self.describe(p) for p in placed]})

    def trim(self) -> Dict[str, Any]:
        """Between requests on a GPU: the last batch's outputs and the device copy of the windows
        are let go and the caching allocator returns its free blocks to the device. Every worker's
        children share the GPU, and an idle child keeping its largest batch's memory cached left
        the next profile of another worker without memory (8 workers on a 140 GB H200)."""
        self.held = []
        self.mirror, self.mirror_gen = None, -1
        if self.device.type == "cuda":
            gc.collect()
            torch.cuda.empty_cache()
        return {"ok": True}

    def serve(self) -> int:
        while True:
            line = self.stdin.readline()
            if not line:
                return 0
            req = json.loads(line)
            blob = self.stdin.read(int(req["blob"])) if req.get("blob") else b""
            op = req.get("op")
            if op == "map":
                self.remap(int(req["in"]))
                self.send({"ok": True})
            elif op == "load":
                self.send(self.load(req, blob))
            elif op == "call":
                self.call(req, blob)
            elif op == "trim":
                self.send(self.trim())
            elif op == "exit":
                return 0
            else:
                self.send({"ok": False, "class": "runtime_error", "detail": f"unknown op {op!r}"})
