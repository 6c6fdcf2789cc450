"""The operating-system sandbox a candidate's child process runs in (README.md, "Sandbox").

The judge (this worker) never runs candidate code itself: every candidate gets a fresh child
(``child_main.py``) started through ``Jail.command()``. What the child gets:

* **bubblewrap** (``mode: bwrap``, the default when ``bwrap`` is installed): new user, pid, network,
  mount, IPC, UTS and cgroup namespaces; no capabilities; ``--die-with-parent``; a new session (no
  terminal to push input into). The file system is a read-only view of the system directories
  (``/usr``, ``/etc``, ``/lib*``, ``/bin``, ``/sbin``), the interpreter's prefix and import path, the
  harness package and the candidate's own folder; the reference file is masked when it lies in one
  of those; ``/tmp`` is a private tmpfs (the scratch folder, ``file_size_mb`` large); ``/proc`` shows
  only the sandbox's processes; ``/dev`` has only the null-like devices (plus ``/dev/nvidia*`` for
  CUDA). Nothing of ``$HOME``, the workspace, the store or the run folders is visible.
* **limits** set before bubblewrap starts, inherited by everything inside: ``RLIMIT_CPU``
  (``cpu_seconds``), ``RLIMIT_FSIZE`` (``file_size_mb``), ``RLIMIT_CORE`` 0, ``RLIMIT_NPROC`` (when no
  pids cgroup is available) and, where no memory cgroup is available, ``RLIMIT_AS``.
* **a cgroup** when the cgroup file system is writable (v1 ``memory``, ``pids``, ``cpuacct``; or v2):
  ``memory_mb`` resident (swap included where the kernel accounts it), ``processes`` tasks, and the
  exact CPU time the child used (``cpuacct.usage``), which the judge reads to catch work done outside
  the timed calls. The child's processes are killed through it at the end.
* **an environment** with nothing but what the kernel needs: PATH, HOME and TMPDIR (``/tmp``),
  the thread and BLAS settings of the worker, ``CUDA_VISIBLE_DEVICES`` and ``TRITON_*`` settings.
  API keys, tokens and everything else of the engine's environment stay out.

``mode: none`` (only when the user's settings ask for it) runs the child with the limits and the
clean environment but without namespaces; the ready event and every report say so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

SANDBOX_ERROR = "sandbox_error"

DEFAULTS: Dict[str, Any] = {
    "mode": "auto",
    "memory_mb": 4096,
    "processes": 64,
    "cpu_seconds": 600,
    "file_size_mb": 256,
    "call_timeout_s": 60,
}

# Environment variables a child may inherit from the worker (exact names, then prefixes).
_ENV_KEEP = ("OMP_NUM_THREADS", "OPENBLAS_CORETYPE", "OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT",
             "AKG_THREADS", "AKG_MALLOC", "AKG_DEVICE", "CUDA_VISIBLE_DEVICES", "LANG", "LC_ALL",
             "TORCH_USE_RTLD_GLOBAL", "GOMP_SPINCOUNT", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_ENV_KEEP_PREFIXES = ("TRITON_",)
_SYSTEM_DIRS = ("/usr", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt")


class SandboxError(Exception):
    """The sandbox cannot be set up as the settings ask (not the candidate's fault)."""


def settings_from_env(environ: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """AKG_SANDBOX (a JSON object) over DEFAULTS; raises SandboxError on a bad value."""
    environ = os.environ if environ is None else environ
    out = dict(DEFAULTS)
    raw = environ.get("AKG_SANDBOX", "").strip()
    if not raw:
        return out
    try:
        given = json.loads(raw)
    except ValueError as exc:
        raise SandboxError(f"AKG_SANDBOX is not JSON: {exc}") from None
    if not isinstance(given, dict):
        raise SandboxError("AKG_SANDBOX must be a JSON object such as {\"mode\":\"bwrap\"}")
    for key, value in given.items():
        if key not in DEFAULTS:
            raise SandboxError(f"AKG_SANDBOX: unknown field {key!r} (known: {', '.join(DEFAULTS)})")
        if key == "mode":
            if value not in ("auto", "bwrap", "none"):
                raise SandboxError(f"AKG_SANDBOX: mode must be auto, bwrap or none, not {value!r}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise SandboxError(f"AKG_SANDBOX: {key} must be a positive number, not {value!r}")
        out[key] = value
    return out


# ---------- cgroups ----------

def _own_cgroup_paths() -> Dict[str, str]:
    """controller -> this process's cgroup path (v1 controllers by name; v2 under "")."""
    paths: Dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) != 3:
                    continue
                for name in parts[1].split(",") if parts[1] else [""]:
                    paths[name] = parts[2]
    except OSError:
        pass
    return paths


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _read_int(path: str) -> Optional[int]:
    try:
        with open(path, encoding="ascii") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


class Cgroup:
    """One cgroup per child: v1 (memory, pids, cpuacct) or v2; ``dirs`` empty when none could be made."""

    def __init__(self, name: str, memory_bytes: int, processes: int) -> None:
        self.dirs: Dict[str, str] = {}
        self.version = 0
        own = _own_cgroup_paths()
        v1_root = "/sys/fs/cgroup"
        for controller in ("memory", "pids", "cpuacct"):
            base = os.path.join(v1_root, controller)
            if not os.path.isdir(base) or controller not in own:
                continue
            path = os.path.join(base + own[controller], name)
            try:
                os.mkdir(path)
            except OSError:
                continue
            self.dirs[controller] = path
        if self.dirs:
            self.version = 1
            mem = self.dirs.get("memory")
            if mem:
                _write(os.path.join(mem, "memory.limit_in_bytes"), str(memory_bytes))
                _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), str(memory_bytes))
                _write(os.path.join(mem, "memory.swappiness"), "0")
            if "pids" in self.dirs:
                _write(os.path.join(self.dirs["pids"], "pids.max"), str(processes))
            return
        if "" in own and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            path = os.path.join("/sys/fs/cgroup" + own[""], name)
            try:
                os.mkdir(path)
            except OSError:
                return
            self.dirs["v2"] = path
            self.version = 2
            _write(os.path.join(path, "memory.max"), str(memory_bytes))
            _write(os.path.join(path, "memory.swap.max"), "0")
            _write(os.path.join(path, "pids.max"), str(processes))

    def _has(self, controller: str, filename: str) -> Optional[str]:
        base = self.dirs.get(controller) or self.dirs.get("v2")
        if not base:
            return None
        path = os.path.join(base, filename)
        return path if os.path.exists(path) else None

    @property
    def limits_memory(self) -> bool:
        return bool(self._has("memory", "memory.limit_in_bytes") or self._has("v2", "memory.max"))

    @property
    def limits_processes(self) -> bool:
        return bool(self._has("pids", "pids.max"))

    def procs_files(self) -> List[str]:
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    def cpu_ns(self) -> Optional[int]:
        """CPU time used by every process the cgroup ever held, in ns (None when not measured)."""
        path = self._has("cpuacct", "cpuacct.usage")
        if path:
            return _read_int(path)
        path = self._has("v2", "cpu.stat")
        if path:
            try:
                with open(path, encoding="ascii") as f:
                    for line in f:
                        key, _, value = line.partition(" ")
                        if key == "usage_usec":
                            return int(value) * 1000
            except (OSError, ValueError):
                return None
        return None

    def events(self) -> Dict[str, int]:
        """Counters that tell why a child died: memory limit hits (failcnt / oom_kill), pids refusals."""
        out: Dict[str, int] = {}
        mem = self.dirs.get("memory")
        if mem:
            out["memory_failcnt"] = _read_int(os.path.join(mem, "memory.failcnt")) or 0
            try:
                with open(os.path.join(mem, "memory.oom_control"), encoding="ascii") as f:
                    for line in f:
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            out["oom_kill"] = int(value)
            except (OSError, ValueError):
                pass
        pids = self.dirs.get("pids") or self.dirs.get("v2")
        if pids:
            try:
                with open(os.path.join(pids, "pids.events"), encoding="ascii") as f:
                    for line in f:
                        key, _, value = line.partition(" ")
                        if key == "max":
                            out["pids_max"] = int(value)
            except (OSError, ValueError):
                pass
        v2 = self.dirs.get("v2")
        if v2:
            try:
                with open(os.path.join(v2, "memory.events"), encoding="ascii") as f:
                    for line in f:
                        key, _, value = line.partition(" ")
                        if key in ("oom_kill", "max"):
                            out["oom_kill" if key == "oom_kill" else "memory_failcnt"] = int(value)
            except (OSError, ValueError):
                pass
        return out

    def pids(self) -> List[int]:
        found: List[int] = []
        for path in self.procs_files():
            try:
                with open(path, encoding="ascii") as f:
                    found.extend(int(x) for x in f.read().split())
            except (OSError, ValueError):
                pass
        return sorted(set(found))

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup until none is left (bounded), then remove it."""
        v2 = self.dirs.get("v2")
        if v2:
            _write(os.path.join(v2, "cgroup.kill"), "1")
        for _ in range(50):
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
        for path in self.dirs.values():
            for _ in range(50):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


# ---------- the command line ----------

@dataclass
class Jail:
    settings: Dict[str, Any]
    mode: str = "none"
    bwrap: Optional[str] = None
    detail: str = ""
    binds: List[str] = field(default_factory=list)

    @staticmethod
    def create(settings: Dict[str, Any]) -> "Jail":
        """Picks the mode the settings ask for; raises SandboxError when it is not available."""
        wanted = settings.get("mode", "auto")
        jail = Jail(settings=settings)
        if wanted == "none":
            jail.mode = "none"
        else:
            path = shutil.which("bwrap")
            if path is None:
                raise SandboxError(
                    "bubblewrap (bwrap) is not installed, so candidates cannot be sandboxed: install the "
                    "Debian package bubblewrap (scripts/setup.sh does), or set sandbox mode none in "
                    "config.yaml (or --sandbox none) to run candidates without an OS sandbox")
            jail.mode, jail.bwrap = "bwrap", path
        return jail

    def describe(self, cgroup_version: int, cgroup_limits: Dict[str, bool], gpu: bool = False) -> Dict[str, Any]:
        s = self.settings
        limits = {k: s[k] for k in ("memory_mb", "processes", "cpu_seconds", "file_size_mb", "call_timeout_s")}
        parts = []
        if self.mode == "bwrap":
            parts.append("bwrap (user, pid, network, mount, IPC and UTS namespaces; no capabilities; "
                         "read-only system, interpreter and kernel folders; private /tmp)")
        else:
            parts.append("none (no namespaces: the candidate sees the file system and network as the "
                         "worker does; limits and a clean environment only)")
        how = f"cgroup v{cgroup_version}" if cgroup_version else "rlimits"
        procs = "cgroup" if cgroup_limits.get("processes") else "RLIMIT_NPROC"
        if cgroup_limits.get("memory"):
            memory = f"memory {s['memory_mb']} MB (cgroup)"
        elif gpu:
            memory = "memory not limited (no memory cgroup here, and an address-space limit would stop CUDA)"
        else:
            memory = f"memory {s['memory_mb']} MB (RLIMIT_AS)"
        parts.append(f"{memory}, processes {s['processes']} ({procs}), "
                     f"CPU {s['cpu_seconds']} s, files {s['file_size_mb']} MB, "
                     f"call timeout {s['call_timeout_s']} s; accounting by {how}")
        return {"mode": self.mode, "detail": "; ".join(parts), "limits": limits,
                "cgroup": cgroup_version or None}

    def child_env(self, extra: Dict[str, str]) -> Dict[str, str]:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYTHONNOUSERSITE": "1",
               "TRITON_CACHE_DIR": "/tmp/triton-cache"}
        for key, value in os.environ.items():
            if key in _ENV_KEEP or key.startswith(_ENV_KEEP_PREFIXES):
                env[key] = value
        env.update(extra)
        return env

    def visible_paths(self, kernel_dir: str, harness_dir: str) -> List[str]:
        """Everything the child sees read-only: system folders, the interpreter's prefix and import
        path (but the harness folder itself), the harness package and the child's entry, the kernel."""
        dirs = [d for d in _SYSTEM_DIRS if os.path.lexists(d)]
        harness_real = os.path.realpath(harness_dir)
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
        for entry in sys.path:
            if entry and os.path.isdir(entry) and os.path.realpath(entry) != harness_real:
                prefixes.add(os.path.realpath(entry))
        prefixes.add(os.path.realpath(os.path.dirname(sys.executable)))
        prefixes.add(os.path.dirname(os.path.abspath(sys.executable)))  # a venv is found from here
        prefixes.add(os.path.join(harness_dir, "akg_harness"))
        prefixes.add(os.path.join(harness_dir, "child_main.py"))
        prefixes.add(kernel_dir)
        for p in sorted(prefixes):
            if not p or p == "/" or any(p == d or p.startswith(d + "/") for d in _SYSTEM_DIRS):
                continue
            if os.path.exists(p):
                dirs.append(p)
        return dirs

    def command(self, argv: List[str], env: Dict[str, str], kernel_dir: str, harness_dir: str,
                hide: List[str], rlimits: Dict[str, int], cgroup: Cgroup) -> List[str]:
        """The full command line: a small shell that joins the cgroup and sets the limits, then
        bubblewrap (or, in mode none, the child directly)."""
        prologue = []
        for path in cgroup.procs_files():
            prologue.append(f'echo $$ > "{path}" || exit 97')
        for flag, value in rlimits.items():
            prologue.append(f"ulimit -{flag} {value} || exit 98")
        inner: List[str]
        if self.mode == "bwrap":
            assert self.bwrap is not None
            size = int(self.settings["file_size_mb"]) << 20
            # the private /tmp first: read-only binds of folders that live under /tmp (an
            # interpreter's venv, a harness checkout) go on top of it, in order
            inner = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                     "--cap-drop", "ALL", "--clearenv", "--size", str(size), "--tmpfs", "/tmp"]
            visible = self.visible_paths(kernel_dir, harness_dir)
            for d in visible:
                if os.path.islink(d) and os.path.dirname(d) == "/":
                    inner += ["--symlink", os.readlink(d), d]
                else:
                    inner += ["--ro-bind", d, d]
            for path in hide:
                real = os.path.realpath(path)
                if os.path.isfile(real) and any(real.startswith(d.rstrip("/") + "/") for d in visible):
                    inner += ["--ro-bind", "/dev/null", real]
            inner += ["--proc", "/proc", "--dev", "/dev"]
            gpus = [d for d in (sorted(os.listdir("/dev")) if os.path.isdir("/dev") else []) if d.startswith("nvidia")]
            for dev in gpus:
                inner += ["--dev-bind", "/dev/" + dev, "/dev/" + dev]
            if gpus and os.path.isdir("/sys"):
                inner += ["--ro-bind", "/sys", "/sys"]  # the CUDA driver reads the PCI topology there
            for key, value in sorted(env.items()):
                inner += ["--setenv", key, value]
            # the root of the view is bubblewrap's own tmpfs, holding the mount points: read-only too
            inner += ["--remount-ro", "/", "--chdir", "/tmp"]
            inner += ["--"] + argv
        else:
            inner = argv
        script = "; ".join(prologue + ['exec "$@"']) if prologue else 'exec "$@"'
        return ["/bin/bash", "-c", script, "akg-sandbox"] + inner
