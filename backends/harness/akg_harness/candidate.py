"""The judge's handle on a candidate's child process (README.md, "Judge and child").

The worker is the judge: it draws inputs, runs the reference, compares and answers. A candidate's
code runs only in a child started here, inside the sandbox of ``jail.py``, and never in the worker.
A child serves one candidate: the verify and the profile of that same kernel files, nothing else;
any other kernel gets another child. The profile times the reference in a child too (the reference
child: ``Model`` of the reference file), so that both sides run in the same kind of process under
one protocol; it runs only references, which are trusted, so the judge keeps one for its lifetime
and loads each profile's reference into it. To keep start-up off the critical path the judge starts
the reference child and one spare child (torch imported, calibrated, nothing loaded) when it
starts, while the engine designs and builds the first candidate, and after an answer starts a
missing spare while the engine builds the next one; a profile never starts one (it would share the
cores with the timed calls).

What crosses the boundary:

* judge -> child: a JSON line per command (map, load, call, exit), with a pickle after it for the
  init arguments, the reference's weights and the call's argument structure; tensors go through the
  input region (a memfd both map; sealed after the judge mapped it, so the child's mapping is
  read-only and the region cannot shrink), written by the judge before every call, or for a
  profile once, each set twice in a row so that any rotation of it is a window read in place;
* child -> judge: JSON lines only, read with a deadline and a size limit. The judge believes no
  number the child reports: when the child says "done" it reads the outputs' bytes itself from the
  child's memory (``process_vm_readv``, at the addresses the "done" line gives, the sizes the
  reference's outputs have), times each batch from its own "go" to that line, and reads the
  child's CPU time from the cgroup. Tensors it builds are plain ``torch.Tensor`` objects over bytes
  it copied.

A call's failures become HarnessErrors with the classes of the README: ``timeout`` (the judge's
per-call deadline), ``crash`` (the child died by a signal), ``resource_limit`` (memory, processes,
CPU time or file size), ``late_write`` (an output changed after "done"), ``runtime_error`` (the
kernel raised, or modified an input), ``build_error`` (import), ``sandbox_error`` (the sandbox
could not start: not the candidate's fault).
"""

from __future__ import annotations

import fcntl
import json
import mmap
import os
import ctypes
import pickle
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import torch

from .child import TENSOR_MARK
from .jail import SANDBOX_ERROR, Cgroup, Jail, _own_cgroup_paths
from .protocol import BUILD_ERROR, RUNTIME_ERROR, HarnessError

TIMEOUT = "timeout"
CRASH = "crash"
RESOURCE_LIMIT = "resource_limit"
LATE_WRITE = "late_write"
BACKGROUND_WORK = "background_work"

ALIGN = 64
MAX_ANSWER_LINE = 1 << 20
START_TIMEOUT_S = 180.0
CALIBRATION_CALLS = 24
STAGE_MAX_BYTES = 512 << 20
MAX_OUTPUT_BYTES = 16 << 30
SANDBOX_KERNEL_DIR = "/akg/kernel"
TRIM_TIMEOUT_S = 10.0  # a GPU child's answer to "trim" (a gc and the allocator's release)
INPUT_RESERVE = 1 << 40  # bytes of the (sparse) input region: its size is sealed
_F_ADD_SEALS = 1033
_F_SEAL_SHRINK, _F_SEAL_GROW, _F_SEAL_FUTURE_WRITE = 0x2, 0x4, 0x10
STAGE_PREFIX = "akg-kernel-"  # + the judge's pid: a judge killed before its cleanup is swept later
_HARNESS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_counter = 0

_SIGNAL_TEXT = {
    signal.SIGSEGV: "SIGSEGV (invalid memory access)", signal.SIGBUS: "SIGBUS (bad memory access)",
    signal.SIGABRT: "SIGABRT (abort)", signal.SIGILL: "SIGILL (illegal instruction)",
    signal.SIGFPE: "SIGFPE (arithmetic fault)", signal.SIGKILL: "SIGKILL",
    signal.SIGXCPU: "SIGXCPU (CPU time limit)", signal.SIGXFSZ: "SIGXFSZ (file size limit)",
}


def _dtype_from_name(name: Any) -> Optional[torch.dtype]:
    if not isinstance(name, str) or not name.isidentifier():
        return None
    value = getattr(torch, name, None)
    return value if isinstance(value, torch.dtype) else None


def _collect(value: Any, into: List[torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor):
        into.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, into)


def window_step(t: torch.Tensor) -> int:
    """Rotations of ``t`` given as windows start on a multiple of this many elements (ALIGN bytes),
    so every input keeps the alignment an allocation would have."""
    return max(1, ALIGN // max(t.element_size(), 1))


def _mark(value: Any, it: Any) -> Any:
    """``value`` with every tensor replaced by (TENSOR_MARK, offset, dtype, shape, device)."""
    if isinstance(value, torch.Tensor):
        t, off = next(it)
        return (TENSOR_MARK, off, t.dtype, tuple(t.shape), t.device.type)
    if isinstance(value, list):
        return [_mark(v, it) for v in value]
    if isinstance(value, tuple):
        return tuple(_mark(v, it) for v in value)
    return value


@dataclass
class CallResult:
    outs: Dict[int, List[Any]]  # per checked set: the outputs as read at "done"
    wall_ns: int               # judge-measured, "go" to "done"
    cpu_ns: Optional[int]      # child CPU time inside the call (cgroup), None when not measured
    cpu_begin: Optional[int] = None   # the cgroup's CPU counter when the command was sent
    cpu_end: Optional[int] = None     # ... and when the last answer line had arrived
    cpu_handling: int = 0             # child CPU spent preparing the call and describing outputs
    settle_ns: int = 0                # judge-measured wall time of the untimed settling calls
    copy_ns: int = 0                  # on a GPU: judge-measured, "done" to "copied" (outputs to the host)
    copied: int = 0                   # ... of how many calls' outputs (the checked ones, else one)


class CandidateProcess:
    """One sandboxed child (see the module docstring)."""

    def __init__(self, jail: Jail, device: str, hide: Optional[List[str]] = None) -> None:
        global _counter
        _counter += 1
        self.jail = jail
        self.settings = jail.settings
        self.device = device
        self.key: Any = None
        self.loaded = False
        self.used = False
        self.dead_reason: Optional[HarnessError] = None
        self.kernel_real = ""
        self.delta_ns = 0
        self.hide = list(hide or [])
        self.stage = tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-")
        os.chmod(self.stage, 0o755)
        # The input region: a memfd of INPUT_RESERVE bytes (sparse), mapped writable here once and
        # then sealed, so that the child can only map it read-only (an input the kernel writes
        # faults) and can neither shrink it under the judge nor write it by other means.
        self.in_fd = os.memfd_create("akg-inputs", os.MFD_ALLOW_SEALING)
        self.in_size = 0
        self.in_mm: Optional[mmap.mmap] = None
        self.in_u8: Optional[torch.Tensor] = None
        self.windows: Optional[List[List[Tuple[int, int]]]] = None
        self.windows_gen = 0  # counts write_windows calls: a GPU child copies each generation once
        self.windows_top = 0  # the bytes the windows span
        try:
            os.ftruncate(self.in_fd, INPUT_RESERVE)
            self.in_mm = mmap.mmap(self.in_fd, INPUT_RESERVE)
            fcntl.fcntl(self.in_fd, _F_ADD_SEALS, _F_SEAL_SHRINK | _F_SEAL_GROW | _F_SEAL_FUTURE_WRITE)
        except OSError as exc:
            os.close(self.in_fd)
            raise HarnessError(SANDBOX_ERROR, f"cannot set up the read-only input region (memfd seals, Linux "
                               f"5.1 or later): {exc}") from None
        self.in_u8 = torch.frombuffer(self.in_mm, dtype=torch.uint8)
        self.child_pid = 0
        self.last_outputs: List[Tuple[int, int]] = []
        self.cgroup = Cgroup(f"akg-{os.getpid()}-{_counter}", int(self.settings["memory_mb"]) << 20,
                             int(self.settings["processes"]))
        self.cpu_outside_ns = 0
        self._buf = b""
        self._ready = False
        self.proc: Optional[subprocess.Popen] = None
        try:
            self._spawn()
        except BaseException:
            self.close()
            raise

    # ---------- start ----------

    def _rlimits(self) -> Dict[str, int]:
        s = self.settings
        limits = {"c": 0, "t": int(s["cpu_seconds"]), "f": int(s["file_size_mb"]) * 1024}
        if not self.cgroup.limits_memory and not self.device.startswith("cuda"):
            # the address space: torch maps a lot; on a GPU, CUDA maps the device's whole memory
            # into it, so there only a memory cgroup can limit memory (Jail.describe says so)
            limits["v"] = (int(s["memory_mb"]) + 8192) * 1024
        if not self.cgroup.limits_processes and os.getuid() != 0:
            limits["u"] = _user_tasks() + int(s["processes"])
        return limits

    def _spawn(self) -> None:
        kernel_dir = SANDBOX_KERNEL_DIR if self.jail.mode == "bwrap" else self.stage
        self.kernel_dir = kernel_dir
        argv = [sys.executable, "-u",
                os.path.join(_HARNESS_DIR, "child_main.py"), "--in-fd", str(self.in_fd),
                "--device", self.device]
        env = self.jail.child_env({})
        cmd = self.jail.command(argv, env, self.stage, _HARNESS_DIR, self.hide, self._rlimits(), self.cgroup)
        self.visible = self.jail.visible_paths(self.stage, _HARNESS_DIR) if self.jail.mode == "bwrap" else []
        if self.jail.mode == "bwrap":
            # the staged kernel folder appears read-only at a fixed path inside the sandbox
            at = cmd.index("--remount-ro")
            cmd[at:at] = ["--ro-bind", self.stage, SANDBOX_KERNEL_DIR]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                         pass_fds=(self.in_fd,), env=env, preexec_fn=_die_with_judge,
                                         start_new_session=True, close_fds=True)
        except OSError as exc:
            raise HarnessError(SANDBOX_ERROR, f"cannot start the candidate's sandbox: {exc}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.wfd = self.proc.stdin.fileno()
        self.rfd = self.proc.stdout.fileno()
        os.set_blocking(self.wfd, False)

    def wait_ready(self) -> None:
        """Waits for the child's start (torch imported) and measures the call overhead."""
        if self._ready:
            return
        try:
            msg = self._recv(time.monotonic() + START_TIMEOUT_S, "starting")
        except HarnessError as err:
            raise HarnessError(SANDBOX_ERROR, f"the candidate's sandboxed process did not start: {err.detail}") from None
        if msg.get("event") != "ready":
            raise HarnessError(SANDBOX_ERROR, f"the candidate's process started wrongly: {str(msg)[:300]}")
        self._ready = True
        self.child_pid = _find_child(self.proc.pid if self.proc is not None else 0)
        if not self.child_pid:
            raise HarnessError(SANDBOX_ERROR, "the candidate's sandboxed process cannot be found among the "
                               "sandbox's processes")
        self._ensure(64)
        probe = [[torch.zeros(1)]]
        walls = []
        for _ in range(CALIBRATION_CALLS):
            walls.append(self.call(probe, expect=[4], null=True, what="calibration").wall_ns)
        # the least a call costs: other load on the machine only ever adds, and a calibration
        # slowed by it (at load 10 a median reached a whole batch of a fast kernel) would be
        # taken off every batch, down to a kernel timed at 0
        self.delta_ns = min(walls)

    def shows(self, path: str) -> bool:
        """True when ``path`` is visible inside this child's sandbox and not masked."""
        real = os.path.realpath(path)
        if any(os.path.realpath(h) == real for h in self.hide):
            return False
        return any(real == v or real.startswith(v.rstrip("/") + "/") for v in self.visible)

    # ---------- wire ----------

    def _deadline(self) -> float:
        return time.monotonic() + float(self.settings["call_timeout_s"])

    def _send(self, obj: Dict[str, Any], blob: bytes = b"", deadline: Optional[float] = None) -> None:
        if blob:
            obj = dict(obj, blob=len(blob))
        data = memoryview(json.dumps(obj).encode() + b"\n" + blob)
        deadline = deadline or self._deadline()
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail_timeout("accepting its input")
            _, writable, _ = select.select([], [self.wfd], [], left)
            if not writable:
                continue
            try:
                n = os.write(self.wfd, data)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                self._died("receiving its input")
            data = data[n:]

    def _recv(self, deadline: float, doing: str) -> Dict[str, Any]:
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail_timeout(doing)
            readable, _, _ = select.select([self.rfd], [], [], left)
            if not readable:
                continue
            chunk = os.read(self.rfd, 1 << 16)
            if not chunk:
                self._died(doing)
            self._buf += chunk
            if len(self._buf) > MAX_ANSWER_LINE:
                self.kill()
                raise HarnessError(RUNTIME_ERROR, "the kernel's process wrote an answer line longer than "
                                   f"{MAX_ANSWER_LINE} bytes: it does not follow the child protocol",
                                   where="kernel")
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            msg = json.loads(line)
        except ValueError:
            self.kill()
            raise HarnessError(RUNTIME_ERROR, "the kernel's process wrote something that is not an answer "
                               f"line: {line[:120]!r}", where="kernel") from None
        if not isinstance(msg, dict):
            self.kill()
            raise HarnessError(RUNTIME_ERROR, "the kernel's process wrote a malformed answer", where="kernel")
        return msg

    def _fail_timeout(self, doing: str) -> None:
        self.kill()
        limit = self.settings["call_timeout_s"] if self._ready else START_TIMEOUT_S
        raise HarnessError(TIMEOUT, f"the kernel did not finish {doing} within {limit:g} s "
                           "(the judge's per-call limit, call_timeout_s); the process was killed",
                           where="kernel")

    def _died(self, doing: str) -> None:
        assert self.proc is not None
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.proc.returncode
        events = self.cgroup.events()
        self.kill()
        sig = -rc if rc is not None and rc < 0 else (rc - 128 if rc is not None and rc > 128 else 0)
        s = self.settings
        if events.get("oom_kill") or (sig == signal.SIGKILL and events.get("memory_failcnt")):
            raise HarnessError(RESOURCE_LIMIT, f"the kernel's process exceeded the memory limit of "
                               f"{s['memory_mb']} MB while {doing} and was killed (sandbox memory_mb)",
                               where="kernel")
        if sig == signal.SIGXCPU:
            raise HarnessError(RESOURCE_LIMIT, f"the kernel's process used more than {s['cpu_seconds']} s of "
                               f"CPU time while {doing} (sandbox cpu_seconds)", where="kernel")
        if sig == signal.SIGXFSZ:
            raise HarnessError(RESOURCE_LIMIT, f"the kernel's process wrote a file larger than "
                               f"{s['file_size_mb']} MB while {doing} (sandbox file_size_mb)", where="kernel")
        if events.get("pids_max"):
            raise HarnessError(RESOURCE_LIMIT, f"the kernel's process tried to run more than {s['processes']} "
                               f"processes or threads while {doing} and died (sandbox processes)", where="kernel")
        if sig:
            name = _SIGNAL_TEXT.get(sig, f"signal {sig}")
            hint = ""
            if sig in (signal.SIGSEGV, signal.SIGBUS):
                hint = (": its inputs are read-only, so writing one (in place) ends it this way, as does any "
                        "access outside the memory it owns")
            raise HarnessError(CRASH, f"the kernel's process died with {name} while {doing}{hint}", where="kernel")
        if rc in (97, 98) and not self._ready:
            raise HarnessError(SANDBOX_ERROR, "the sandbox could not join its cgroup or set its limits "
                               f"(exit status {rc})")
        raise HarnessError(CRASH, f"the kernel's process exited (status {rc}) while {doing}", where="kernel")

    # ---------- regions ----------

    def _ensure(self, in_bytes: int) -> None:
        if in_bytes <= self.in_size:
            return
        if in_bytes > INPUT_RESERVE:
            raise HarnessError(RUNTIME_ERROR, f"the inputs of one call take {in_bytes} bytes, more than the "
                               f"judge's input region ({INPUT_RESERVE} bytes)")
        self.in_size = min(max(in_bytes, 2 * self.in_size, 1 << 20), INPUT_RESERVE)
        self._send({"op": "map", "in": self.in_size})
        msg = self._recv(self._deadline(), "mapping its input region")
        if not msg.get("ok"):
            raise HarnessError(RUNTIME_ERROR, "the kernel's process could not map the input region",
                               where="kernel")

    def _read(self, addr: Any, nbytes: int) -> torch.Tensor:
        """``nbytes`` of the child's memory at ``addr`` (the judge's own read), as a uint8 tensor
        of the judge's own memory."""
        if not isinstance(addr, int) or isinstance(addr, bool) or addr <= 0:
            raise HarnessError(RUNTIME_ERROR, "the kernel's process gave no valid address for an output",
                               where="kernel")
        buf = torch.empty(nbytes, dtype=torch.uint8)
        if nbytes and not _read_memory(self.child_pid, addr, buf.data_ptr(), nbytes):
            raise HarnessError(RUNTIME_ERROR, f"an output of {nbytes} bytes at 0x{addr:x} is not readable memory "
                               "of the kernel's process (it claims an output it does not hold)", where="kernel")
        return buf

    # ---------- load ----------

    def stage_kernel(self, kernel_path: str, hide: List[str]) -> str:
        """Copies the kernel's folder (regular files only) into the staging folder; returns the
        kernel's path as the child sees it."""
        src = os.path.dirname(kernel_path)
        hidden = {os.path.realpath(h) for h in hide}
        total = 0
        for root, dirs, files in os.walk(src):
            depth = root[len(src):].count(os.sep)
            if depth >= 3:
                dirs[:] = []
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            rel = os.path.relpath(root, src)
            dest_dir = self.stage if rel == "." else os.path.join(self.stage, rel)
            os.makedirs(dest_dir, exist_ok=True)
            for name in files:
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path) or os.path.realpath(path) in hidden:
                    continue
                total += os.path.getsize(path)
                if total > STAGE_MAX_BYTES:
                    raise HarnessError(BUILD_ERROR, f"the kernel's folder {src} holds more than "
                                       f"{STAGE_MAX_BYTES >> 20} MB; a candidate folder holds its own files only",
                                       where="kernel")
                shutil.copy2(path, os.path.join(dest_dir, name))
                os.chmod(os.path.join(dest_dir, name), 0o755 if name.endswith(".so") else 0o644)
        return os.path.join(self.kernel_dir, os.path.basename(kernel_path))

    def stage_reference(self, path: str) -> str:
        """Copies the reference file and the Python files next to it (what it may import) into the
        staging folder, emptied first (the reference child loads one reference after another);
        returns its path as the child sees it."""
        for name in os.listdir(self.stage):
            full = os.path.join(self.stage, name)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full, ignore_errors=True)
            else:
                os.unlink(full)
        src = os.path.dirname(path)
        total = 0
        for name in sorted(os.listdir(src)):
            full = os.path.join(src, name)
            if (name.endswith(".py") or full == path) and os.path.isfile(full) and not os.path.islink(full):
                total += os.path.getsize(full)
                if total > STAGE_MAX_BYTES:
                    break
                shutil.copy2(full, os.path.join(self.stage, name))
                os.chmod(os.path.join(self.stage, name), 0o644)
        return os.path.join(self.kernel_dir, os.path.basename(path))

    def load(self, kernel_path: str, hide: List[str], init: List[Any], state: Dict[str, torch.Tensor],
             seed: int, cls: str = "ModelNew") -> None:
        """Loads ``cls`` of ``kernel_path`` (ModelNew of a candidate; Model of the reference for the
        reference child) built from ``init`` and ``seed``, with the entries of ``state`` copied in."""
        self.wait_ready()
        self.kernel_real = kernel_path
        inner = self.stage_reference(kernel_path) if cls == "Model" else self.stage_kernel(kernel_path, hide)
        self.inner_kernel = inner
        blob = pickle.dumps({"init": init, "state": {k: v.detach().cpu() for k, v in state.items()}},
                            protocol=pickle.HIGHEST_PROTOCOL)
        self.used = True
        self._send({"op": "load", "kernel": inner, "seed": seed, "cls": cls}, blob)
        msg = self._recv(self._deadline(), "loading")
        if not msg.get("ok"):
            raise self._kernel_error(msg, BUILD_ERROR)
        self.loaded = True

    def _kernel_error(self, msg: Dict[str, Any], default: str) -> HarnessError:
        cls = msg.get("class") if msg.get("class") in (BUILD_ERROR, RUNTIME_ERROR) else default
        if not isinstance(msg.get("detail"), str) or not msg.get("detail"):
            self.kill()
            return HarnessError(RUNTIME_ERROR, "the kernel's process broke the child protocol: it answered "
                                f"{json.dumps(msg)[:200]} where the judge waited for its next step; something in "
                                "the kernel wrote to the judge's answer channel", where="kernel")
        detail = str(msg.get("detail"))[:3900]
        detail = detail.replace(self.kernel_dir + "/", os.path.dirname(self.kernel_real) + "/")
        line = msg.get("line") if isinstance(msg.get("line"), int) and not isinstance(msg.get("line"), bool) else None
        return HarnessError(cls, detail, where="kernel", line=line,
                            file=self.kernel_real if line is not None else None)

    # ---------- calls ----------

    def write_inputs(self, batch: List[List[Any]], rolls: Optional[List[Optional[List[int]]]] = None
                     ) -> Tuple[List[Any], List[List[torch.Tensor]]]:
        """Puts the tensors of every argument set of ``batch`` into the input region (tensor i of
        set b rolled by ``rolls[b][i]`` elements when given); returns the structures the child
        rebuilds and, per set, the tensors as written."""
        sets: List[List[torch.Tensor]] = []
        offsets: List[List[int]] = []
        top = 0
        for args in batch:
            tensors: List[torch.Tensor] = []
            _collect(args, tensors)
            sets.append(tensors)
            offs = []
            for t in tensors:
                top = (top + ALIGN - 1) // ALIGN * ALIGN
                offs.append(top)
                top += t.numel() * t.element_size()
            offsets.append(offs)
        self._ensure(max(top, 64))
        assert self.in_u8 is not None
        self.windows = None  # written over
        written: List[List[torch.Tensor]] = []
        structures: List[Any] = []
        for b, (args, tensors, offs) in enumerate(zip(batch, sets, offsets)):
            roll = rolls[b] if rolls is not None and b < len(rolls) else None
            done: List[torch.Tensor] = []
            for i, (t, off) in enumerate(zip(tensors, offs)):
                nbytes = t.numel() * t.element_size()
                dest = self.in_u8[off:off + nbytes].view(t.dtype).view(t.shape)
                src = t.detach()
                shift = roll[i] if roll is not None and i < len(roll) else 0
                if shift and t.numel() > 1:
                    flat_src = src.contiguous().reshape(-1)
                    flat_dest = dest.reshape(-1)
                    k = shift % t.numel()
                    flat_dest[: t.numel() - k].copy_(flat_src[k:])
                    flat_dest[t.numel() - k:].copy_(flat_src[:k])
                else:
                    dest.copy_(src)
                done.append(dest)
            written.append(done)
            it = iter(zip(tensors, offs))
            structures.append([_mark(a, it) for a in args])
        return structures, written

    def write_windows(self, bases: List[List[Any]]) -> None:
        """Writes every tensor of every argument set in ``bases`` twice in a row (x then x again)
        into the input region, once: a call's input can then be any rotation of x with no copy,
        the contiguous window that starts r elements into the doubled copy (``window_inputs``).
        Valid until ``write_inputs`` writes over the region."""
        top = 0
        layout: List[List[Tuple[int, int]]] = []
        per_base: List[List[torch.Tensor]] = []
        for args in bases:
            tensors: List[torch.Tensor] = []
            _collect(args, tensors)
            per_base.append(tensors)
            offs = []
            for t in tensors:
                top = (top + ALIGN - 1) // ALIGN * ALIGN
                offs.append((top, t.numel()))
                top += 2 * t.numel() * t.element_size()
            layout.append(offs)
        self._ensure(max(top, 64))
        assert self.in_u8 is not None
        for tensors, offs in zip(per_base, layout):
            for t, (off, n) in zip(tensors, offs):
                nbytes = n * t.element_size()
                flat = t.detach().contiguous().reshape(-1)
                self.in_u8[off:off + nbytes].view(t.dtype).copy_(flat)
                self.in_u8[off + nbytes:off + 2 * nbytes].view(t.dtype).copy_(flat)
        self.windows = layout
        self.windows_gen += 1
        self.windows_top = top

    def window_inputs(self, bases: List[List[Any]], variants: List[Tuple[int, List[int]]]
                      ) -> Tuple[List[Any], List[List[torch.Tensor]]]:
        """What ``write_inputs`` gives for argument sets that are rotations of the sets written by
        ``write_windows``: variant (b, rolls) is set b with tensor i rolled by rolls[i] elements
        (each a multiple of ``window_step``), read in place from the doubled copies."""
        assert self.windows is not None and self.in_u8 is not None
        structures: List[Any] = []
        written: List[List[torch.Tensor]] = []
        for b, rolls in variants:
            tensors: List[torch.Tensor] = []
            _collect(bases[b], tensors)
            done: List[torch.Tensor] = []
            placed: List[Tuple[torch.Tensor, int]] = []
            for t, (off, n), r in zip(tensors, self.windows[b], rolls):
                start = off + (r % n if n else 0) * t.element_size()
                done.append(self.in_u8[start:start + n * t.element_size()].view(t.dtype).view(t.shape))
                placed.append((t, start))
            written.append(done)
            it = iter(placed)
            structures.append([_mark(a, it) for a in bases[b]])
        return structures, written

    def call(self, batch: List[List[Any]], check: Optional[List[int]] = None, expect: Optional[List[int]] = None,
             null: bool = False, what: str = "ModelNew.forward",
             rolls: Optional[List[Optional[List[int]]]] = None, delay_s: float = 0.005,
             poison: bool = False, settle: int = 0, prepared: Optional[Tuple[List[Any], List[List[torch.Tensor]]]] = None,
             windowed: bool = False) -> CallResult:
        """One batch of calls of the candidate, back to back, timed by the judge from "go" to
        "done". For the sets listed in ``check`` (timed ones: the first ``settle`` sets are
        settling calls, untimed, whose outputs the child lets go at once) the outputs are read at
        "done" (``expect``: the
        reference's output sizes in bytes), read again after ``delay_s`` (late writers), and the
        inputs must be as written. ``prepared``: the inputs already in the region, as ``write_inputs``
        or ``window_inputs`` gave them (otherwise ``batch`` is written now). With
        ``poison`` the judge first fills the memory of the last
        batch's outputs with 0xFF bytes (NaN, -1, 255, True): the child frees them when the command
        arrives and the kernel's next allocation of that size most likely gets them back, so an
        element it does not write shows up (verify poisons; profile does not, it checks fresh inputs).
        ``windowed``: ``prepared`` came from ``window_inputs`` (a GPU child then takes the inputs
        from its device copy of the windows)."""
        if self.dead_reason is not None:
            raise self.dead_reason
        if any(b < settle or b >= len(batch) for b in (check or [])):
            raise ValueError(f"check {check} names calls that are not timed calls of this batch "
                             f"({settle} settling, {len(batch) - settle} timed)")
        try:
            if poison:
                for addr, nbytes in self.last_outputs:
                    _write_memory(self.child_pid, addr, _poison(nbytes))
            if prepared is None:
                prepared = self.write_inputs(batch, rolls)
            mirror = [self.windows_gen, self.windows_top] if windowed and self.windows is not None else None
            return self._call(batch, check or [], expect or [], null, what, prepared, delay_s, settle, mirror)
        except HarnessError as err:
            if err.error_class in (TIMEOUT, CRASH, RESOURCE_LIMIT, SANDBOX_ERROR, LATE_WRITE):
                self.dead_reason = err
            raise

    def _call(self, batch: List[List[Any]], check: List[int], expect: List[int], null: bool, what: str,
              prepared: Tuple[List[Any], List[List[torch.Tensor]]], delay_s: float, settle: int,
              mirror: Optional[List[int]] = None) -> CallResult:
        structures, written = prepared
        expected = {b: [t.clone() for t in written[b]] for b in check}
        blob = pickle.dumps(structures, protocol=pickle.HIGHEST_PROTOCOL)
        cpu_begin = self.cgroup.cpu_ns()
        self._send({"op": "call", "null": null, "settle": settle, "mirror": mirror}, blob)
        msg = self._recv(self._deadline(), f"preparing {what}")
        if not msg.get("ready"):
            raise self._kernel_error(msg, RUNTIME_ERROR)
        settle_ns, settle_cpu = 0, 0
        if settle:
            deadline = time.monotonic() + float(self.settings["call_timeout_s"]) * settle
            cs0 = self.cgroup.cpu_ns()
            s0 = time.perf_counter_ns()
            self._send({"go": 1}, deadline=deadline)
            msg = self._recv(deadline, f"running {what}")
            settle_ns = time.perf_counter_ns() - s0
            cs1 = self.cgroup.cpu_ns()
            settle_cpu = cs1 - cs0 if cs0 is not None and cs1 is not None else 0
            if not msg.get("settled"):
                raise self._kernel_error(msg, RUNTIME_ERROR)
        deadline = time.monotonic() + float(self.settings["call_timeout_s"]) * len(batch)
        cpu0 = self.cgroup.cpu_ns()
        t0 = time.perf_counter_ns()
        self._send({"go": 1}, deadline=deadline)
        msg = self._recv(deadline, f"running {what}")
        t1 = time.perf_counter_ns()
        cpu1 = self.cgroup.cpu_ns()
        if not msg.get("done"):
            raise self._kernel_error(msg, RUNTIME_ERROR)
        copy_ns, copied = 0, 0
        if msg.get("copy") is True and not null:
            # on a GPU the outputs reach the host after "done": the judge times that phase apart
            # (the kernel's profile is charged what it takes beyond the reference's copy of as
            # many bytes: profile.py); on a CPU there is no such phase
            if not self.device.startswith("cuda"):
                raise HarnessError(RUNTIME_ERROR, "the kernel's process asked for a copy phase on a CPU: "
                                   "it does not follow the child protocol", where="kernel")
            # the outputs the judge reads come to the host: the checked calls', else the last
            # call's (the phase is then timed on both sides alike); the rest stay on the device
            wanted = sorted(check) if check else [len(batch) - 1]
            self._send({"copy": wanted}, deadline=deadline)
            copied = len(wanted)
            msg = self._recv(deadline, f"copying the outputs of {what} to the host")
            copy_ns = time.perf_counter_ns() - t1
            if not msg.get("done"):
                raise self._kernel_error(msg, RUNTIME_ERROR)
        ptrs = msg.get("ptrs")
        if not isinstance(ptrs, list) or len(ptrs) != len(batch) or not all(isinstance(p, list) for p in ptrs):
            raise HarnessError(RUNTIME_ERROR, "the kernel's process answered \"done\" for another number of "
                               "calls than it was given: it does not follow the child protocol", where="kernel")
        # the outputs as they are at "done", before anything else happens
        at_done = {b: [self._read(p, n) for p, n in zip(ptrs[b], expect)] for b in check}
        self.last_outputs = [(p, n) for outs in ptrs for p, n in zip(outs, expect)
                             if isinstance(p, int) and not isinstance(p, bool) and p > 0 and n > 0]
        msg = self._recv(self._deadline(), f"describing the outputs of {what}")
        cpu_end = self.cgroup.cpu_ns()
        descs = msg.get("outs")
        if not isinstance(descs, list) or len(descs) != len(batch):
            raise HarnessError(RUNTIME_ERROR, "the kernel's process described another number of calls "
                               "than it was given", where="kernel")
        outs: Dict[int, List[Any]] = {}
        for b in check:
            outs[b] = self._outputs(descs[b], ptrs[b], at_done[b])
        if check and delay_s > 0:
            time.sleep(delay_s)
        for b in check:
            for i, (p, before) in enumerate(zip(ptrs[b], at_done[b])):
                if not _same_bytes(self._read(p, before.numel()), before):
                    self.kill()
                    raise HarnessError(LATE_WRITE, f"output {i} changed after ModelNew.forward returned: the "
                                       "kernel kept writing it from another thread or process (all work must "
                                       "be finished when forward returns)", where="kernel")
            for i, (before, after) in enumerate(zip(expected[b], written[b])):
                if not _same_bytes(before, after):
                    raise HarnessError(RUNTIME_ERROR, f"kernel modified input {i} in place", where="kernel")
        measured = None not in (cpu_begin, cpu0, cpu1, cpu_end)
        cpu = cpu1 - cpu0 if measured else None
        handling = (cpu_end - cpu_begin) - cpu - settle_cpu if measured else 0
        return CallResult(outs=outs, wall_ns=t1 - t0, cpu_ns=cpu, cpu_begin=cpu_begin if measured else None,
                          cpu_end=cpu_end if measured else None, cpu_handling=handling, settle_ns=settle_ns,
                          copy_ns=copy_ns, copied=copied)

    def _outputs(self, descs: Any, ptrs: List[Any], at_done: List[bytes]) -> List[Any]:
        """Tensors built from the bytes read at "done" (re-read at the described size when the
        kernel's output is not the reference's size: a shape mismatch in any case)."""
        if not isinstance(descs, list):
            raise HarnessError(RUNTIME_ERROR, "the kernel's process sent no outputs", where="kernel")
        outs: List[Any] = []
        for i, d in enumerate(descs):
            if not isinstance(d, dict):
                raise HarnessError(RUNTIME_ERROR, f"output {i}: malformed description", where="kernel")
            if d.get("t") == "value":
                outs.append(d.get("v"))
                continue
            if d.get("t") != "tensor":
                outs.append(_Unsupported(str(d.get("v", ""))[:200]))
                continue
            dtype = _dtype_from_name(d.get("dtype"))
            shape = d.get("shape")
            if dtype is None or not isinstance(shape, list) or len(shape) > 64 or not all(
                    isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
                raise HarnessError(RUNTIME_ERROR, f"output {i}: malformed tensor description", where="kernel")
            numel = 1
            for s in shape:
                numel *= s
            nbytes = numel * torch.empty((), dtype=dtype).element_size()
            if nbytes > MAX_OUTPUT_BYTES:
                raise HarnessError(RUNTIME_ERROR, f"output {i} claims {nbytes} bytes", where="kernel")
            if i < len(at_done) and at_done[i].numel() == nbytes:
                raw = at_done[i]
            else:
                raw = self._read(ptrs[i] if i < len(ptrs) else 0, nbytes)
            t = raw.view(dtype) if nbytes else torch.empty(0, dtype=dtype)
            outs.append(t.reshape(shape))
        return outs

    # ---------- end ----------

    def trim(self) -> None:
        """Asks a live GPU child to give its cached device memory back (``Child.trim``); one that
        does not answer within TRIM_TIMEOUT_S is killed: it holds memory other workers need."""
        if self.proc is None or self.proc.poll() is not None or self.dead_reason is not None \
                or not self.device.startswith("cuda"):
            return
        deadline = time.monotonic() + TRIM_TIMEOUT_S
        self.last_outputs = []  # the child lets them go: nothing may be poisoned there any more
        try:
            self._send({"op": "trim"}, deadline=deadline)
            if self._recv(deadline, "giving back device memory").get("ok"):
                return
        except HarnessError:
            pass
        self.dead_reason = HarnessError(RUNTIME_ERROR, "the kernel's process did not give back its "
                                        "device memory between requests", where="kernel")
        self.kill()

    def kill_now(self) -> None:
        """SIGKILL to the child's process group without waiting (``kill`` or ``close`` reaps it)."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.cgroup.kill_all()

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None and self.dead_reason is None:
            try:
                self._send({"op": "exit"}, deadline=time.monotonic() + 0.5)
            except HarnessError:
                pass
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout) if self.proc is not None else ():
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self.in_u8 = None
        if self.in_mm is not None:
            try:
                self.in_mm.close()
            except (BufferError, ValueError):
                pass
        try:
            os.close(self.in_fd)
        except OSError:
            pass
        self.in_fd = -1
        shutil.rmtree(self.stage, ignore_errors=True)


class _Unsupported:
    """An output the child could not describe (neither a tensor nor a plain value)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return False


def _same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when the two tensors hold the same bytes (memcmp of contiguous memory)."""
    n = a.numel() * a.element_size()
    if n != b.numel() * b.element_size():
        return False
    if n == 0:
        return True
    if not (a.is_contiguous() and b.is_contiguous()):
        a, b = a.contiguous(), b.contiguous()
    return _LIBC.memcmp(ctypes.c_void_p(a.data_ptr()), ctypes.c_void_p(b.data_ptr()), ctypes.c_size_t(n)) == 0


_POISON: List[torch.Tensor] = []


def _poison(nbytes: int) -> torch.Tensor:
    """``nbytes`` of 0xFF (a view of one buffer kept for the purpose)."""
    if not _POISON or _POISON[0].numel() < nbytes:
        _POISON[:] = [torch.full((max(nbytes, 1 << 20),), 255, dtype=torch.uint8)]
    return _POISON[0][:nbytes]


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.process_vm_readv.restype = ctypes.c_ssize_t
_LIBC.process_vm_writev.restype = ctypes.c_ssize_t
_LIBC.memcmp.restype = ctypes.c_int
_LIBC.memcmp.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


def _read_memory(pid: int, addr: int, dest: int, nbytes: int) -> bool:
    """Copies ``nbytes`` of process ``pid`` at ``addr`` to this process's address ``dest``; False
    when not readable."""
    done = 0
    while done < nbytes:
        local = _IoVec(dest + done, nbytes - done)
        remote = _IoVec(addr + done, nbytes - done)
        n = _LIBC.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if n <= 0:
            return False
        done += n
    return True


def _die_with_judge() -> None:
    """In the forked child before exec: killed when the judge dies, from the first instruction on
    (bubblewrap's --die-with-parent only starts once bwrap runs; the shell before it would
    otherwise outlive a judge killed in that moment, and bwrap then never see its parent die)."""
    _LIBC.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL


def _write_memory(pid: int, addr: int, data: torch.Tensor) -> bool:
    """Writes the bytes of ``data`` (contiguous) into process ``pid`` at ``addr``; False when not
    writable (freed, unmapped)."""
    n = data.numel() * data.element_size()
    local = _IoVec(data.data_ptr(), n)
    remote = _IoVec(addr, n)
    return _LIBC.process_vm_writev(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) == n


def _find_child(root: int) -> int:
    """The pid of the sandboxed python (child_main.py) among ``root`` and its descendants."""
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen or pid <= 0:
            continue
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        launcher = os.path.basename(argv[0]) in (b"bwrap", b"bash", b"sh")
        if not launcher and any(a.endswith(b"child_main.py") for a in argv):
            return pid
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                    todo.extend(int(x) for x in f.read().split())
        except OSError:
            continue
    return 0


def sweep_stale_cgroups() -> None:
    """Removes the empty cgroups of workers that died without cleaning up (``akg-<pid>-<n>``)."""
    own = _own_cgroup_paths()
    roots = []
    for controller in ("memory", "pids", "cpuacct"):
        if controller in own:
            roots.append(os.path.join("/sys/fs/cgroup", controller) + own[controller])
    if "" in own:
        roots.append("/sys/fs/cgroup" + own[""])
    for root in roots:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if len(parts) != 3 or parts[0] != "akg" or not parts[1].isdigit():
                continue
            if os.path.exists(f"/proc/{parts[1]}"):
                continue
            try:
                os.rmdir(os.path.join(root, name))
            except OSError:
                pass


def sweep_stale_stages() -> None:
    """Removes the staging folders of judges that died without cleaning up (``akg-kernel-<pid>-*``
    in the temporary folder, owned by this user)."""
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if not name.startswith(STAGE_PREFIX):
            continue
        pid = name[len(STAGE_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
            continue
        path = os.path.join(root, name)
        try:
            if os.lstat(path).st_uid == os.getuid():
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def _user_tasks() -> int:
    uid = os.getuid()
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return count


class Judge:
    """The worker's children, each in a slot of its own: the current candidate's (``current``),
    one warm spare (``spare``) and the reference child (``ref_child``)."""

    def __init__(self, jail: Jail, device: str) -> None:
        self.jail = jail
        self.device = device
        self.current: Optional[CandidateProcess] = None
        self.spare: Optional[CandidateProcess] = None
        self.ref_child: Optional[CandidateProcess] = None
        sweep_stale_cgroups()
        sweep_stale_stages()

    def describe(self) -> Dict[str, Any]:
        """What the sandbox restricts, for the ready event and the reports."""
        probe = Cgroup(f"akg-{os.getpid()}-probe", 1 << 30, 8)
        try:
            return self.jail.describe(probe.version, {"memory": probe.limits_memory,
                                                      "processes": probe.limits_processes},
                                      self.device.startswith("cuda"))
        finally:
            probe.kill_all()

    # ---------- slots ----------

    def _start(self) -> Optional[CandidateProcess]:
        """A child starting now (torch importing), or None when the sandbox refused it (the
        request that needs one then starts it itself and reports why)."""
        try:
            return CandidateProcess(self.jail, self.device)
        except HarnessError:
            return None

    @staticmethod
    def _ready(child: CandidateProcess) -> CandidateProcess:
        """``child`` once started and calibrated; closed when it could not start."""
        try:
            child.wait_ready()
        except HarnessError:
            child.close()
            raise
        return child

    def _drop(self, slot: str) -> None:
        child = getattr(self, slot)
        setattr(self, slot, None)
        if child is not None:
            child.close()

    def _fresh(self) -> CandidateProcess:
        """A started child: the spare or a new one."""
        child, self.spare = self.spare, None
        return self._ready(child if child is not None else CandidateProcess(self.jail, self.device))

    # ---------- the candidate ----------

    def child_for(self, key: Any, kernel_path: str, hide: List[str], init: List[Any],
                  state: Dict[str, torch.Tensor], seed: int) -> CandidateProcess:
        """The loaded child of this candidate (same kernel files), or a fresh one."""
        cur = self.current
        if cur is not None and cur.key == key and cur.loaded and cur.dead_reason is None:
            return cur
        self.drop_current()
        child = self._fresh()
        if any(child.shows(h) for h in hide):
            # the reference lies in a folder the sandbox shows: this candidate gets a child whose
            # view masks it
            child.close()
            child = self._ready(CandidateProcess(self.jail, self.device, hide))
        self.current = child
        child.key = key
        child.load(kernel_path, hide, init, state, seed)
        return child

    def drop_current(self) -> None:
        self._drop("current")

    # ---------- the reference ----------

    def reference_child(self, key: Any, path: str, init: List[Any], state: Dict[str, torch.Tensor],
                        seed: int) -> CandidateProcess:
        """The child that times the reference (Model of ``path``), loaded with it unless it still
        holds it (the same file, seed and weights: ``key``). It runs references only, so one serves
        the judge's lifetime; a new one is started when it died. Raises HarnessError when the
        reference cannot run there (the child is then dropped)."""
        ref = self.ref_child
        if ref is not None and ref.key == key and ref.loaded and ref.dead_reason is None:
            return ref
        if ref is None or ref.dead_reason is not None or (ref.proc is not None and ref.proc.poll() is not None):
            self.drop_reference()
            ref = self.ref_child = CandidateProcess(self.jail, self.device)
        try:
            ref.wait_ready()
            ref.key = None
            ref.load(path, [], init, state, seed, cls="Model")
        except HarnessError:
            self.drop_reference()
            raise
        ref.key = key
        return ref

    def drop_reference(self) -> None:
        self._drop("ref_child")

    # ---------- start-up off the critical path ----------

    def warm_spare(self) -> None:
        """Starts a spare child if there is none."""
        if self.spare is None:
            self.spare = self._start()

    def warm_reference(self) -> None:
        """Starts the reference child (nothing loaded) if there is none."""
        if self.ref_child is None:
            self.ref_child = self._start()

    def settle(self) -> None:
        """Lets a starting spare or reference child finish before anything is timed; one that
        cannot start is dropped."""
        for slot in ("spare", "ref_child"):
            child = getattr(self, slot)
            if child is not None and child.dead_reason is None:
                try:
                    child.wait_ready()
                except HarnessError:
                    self._drop(slot)

    def trim(self) -> None:
        """After a request on a GPU: the candidate's and the reference's children give back the
        device memory they cache (every worker's children share the device)."""
        for child in (self.current, self.ref_child):
            if child is not None:
                child.trim()

    def close(self) -> None:
        # every child killed first, then each reaped: a killed child takes a while to release its
        # memory (torch's), and three of them in turn made every engine's exit wait for all three
        children = [c for c in (self.current, self.ref_child, self.spare) if c is not None]
        for child in children:
            child.kill_now()
        for slot in ("current", "ref_child", "spare"):
            self._drop(slot)
