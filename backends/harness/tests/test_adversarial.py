"""The adversarial suite: hostile candidate kernels against the real worker, its judge and its sandbox.

Every candidate is a folder of ``fixtures/adversarial/`` in the form the engine writes (``model_new.py``
glue, and for native attacks a ``kernel.c`` built here with ``cc -O2 -shared -fPIC -pthread`` into a
copy of the folder, loaded through ctypes like a generated kernel). Each one tries one way to pass
without computing, or to do harm outside the check, and must be refused with its own class and a
message that names what happened:

* Python tricks (torch compute or a torch fallback, threads, TorchScript, the function-mode stack and
  detecting it, tensor subclasses hooking torch, ctypes into libtorch or the process, NumPy through
  DLPack, tolist, patching torch, the harness or the loaded reference, frames, exec, eval,
  __import__, writing answer lines): ``forbidden`` by the static check, at the line it names.
* Native attacks, which pass the static check (crash, hang, fork bomb, huge allocation, network,
  writing outside, rewriting the store, a daemon, signals, the key in the environment, the
  reference file, forged answer lines, _exit, a huge file): stopped by the sandbox or the judge;
  what they aimed at (the test's own sentinel, store, report and listener) must be unchanged.
* Judge-level cheats (in-place input, half-written output, the input returned, counting calls,
  memos, a late writer, a background thread, lost precision, detecting the timer): caught by
  verify's or profile's comparisons.

After every hostile candidate the honest ReLU verifies and profiles on the same worker, and when a
worker ends no process of its candidates is left. The candidates are grouped on three workers, one
per sandbox setting (defaults; a 3 s call deadline; 1024 MB of memory). Skipped as a whole when
bubblewrap is not installed. A hole (a cheat that passes) is an expected failure naming the hole.
``AKG_ADVERSARIAL_TABLE=1`` prints what each candidate got at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import select
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # run as tests.test_adversarial too

from harness_client import FIXTURES as ALL_FIXTURES  # noqa: E402
from harness_client import HARNESS_DIR, Worker  # noqa: E402

FIXTURES = os.path.join(ALL_FIXTURES, "adversarial")
REFS = os.path.join(FIXTURES, "refs")
BWRAP = shutil.which("bwrap")
NO_BWRAP = ("bubblewrap (bwrap) is not installed: the adversarial suite runs candidates in the sandbox "
            "(scripts/setup.sh installs the Debian package bubblewrap)")
SECRET = "akg-test-secret-" + secrets.token_hex(12)
FORGED_ID = 4242
REQUEST_TIMEOUT_S = 90.0
MARK = "# <- refused"
SENTINEL_TEXT = "the sentinel before the suite\n"
REPORT_TEXT = json.dumps({"status": "fail", "speedup": None, "by": "the engine"}) + "\n"
STORE_ROWS = [(1, "numerical_mismatch", None), (2, "timeout", None), (3, "pass", 1.2)]
# What every answer of the suite is gathered into for the table (AKG_ADVERSARIAL_TABLE=1).
OBSERVED: List[Tuple[str, str, str, float, str]] = []
DURATIONS: Dict[str, float] = {}


class Targets:
    """The suite's temporary folder: what the native candidates aim at (a sentinel file, a SQLite
    store, a report.json, a TCP listener on 127.0.0.1), and every candidate built there.

    Owns the folder and the listening socket; ``close()`` removes both."""

    def __init__(self) -> None:
        self.root = tempfile.mkdtemp(prefix="akg-adversarial-")
        self.sentinel = os.path.join(self.root, "sentinel")
        self.report = os.path.join(self.root, "report.json")
        self.store = os.path.join(self.root, "store.db")
        # inside the harness package, which the sandbox shows read-only (the harness folder itself
        # is not shown; where it lies under /tmp its path would land in the sandbox's own /tmp)
        self.harness_file = os.path.join(HARNESS_DIR, "akg_harness", "written_by_candidate")
        with open(self.sentinel, "w", encoding="utf-8") as f:
            f.write(SENTINEL_TEXT)
        with open(self.report, "w", encoding="utf-8") as f:
            f.write(REPORT_TEXT)
        with contextlib.closing(sqlite3.connect(self.store)) as db, db:
            db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, status TEXT NOT NULL, speedup REAL)")
            db.executemany("INSERT INTO runs VALUES (?, ?, ?)", STORE_ROWS)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.unbuilt: Dict[str, str] = {}
        names = sorted(n for n in os.listdir(FIXTURES)
                       if os.path.isfile(os.path.join(FIXTURES, n, "model_new.py")))
        with ThreadPoolExecutor(max_workers=2) as pool:
            for name, problem in zip(names, pool.map(self._build, names)):
                if problem:
                    self.unbuilt[name] = problem

    def _defines(self) -> List[str]:
        text = {"AKG_SENTINEL": self.sentinel, "AKG_OUTSIDE_DIR": self.root, "AKG_STORE": self.store,
                "AKG_REPORT": self.report, "AKG_HARNESS_FILE": self.harness_file,
                "AKG_REFERENCE": os.path.join(REFS, "relu_ref.py")}
        out = [f"-D{k}={json.dumps(v)}" for k, v in text.items()]
        return out + [f"-DAKG_PORT={self.port}", f"-DAKG_FORGED_ID={FORGED_ID}"]

    def _build(self, name: str) -> Optional[str]:
        """Copies the candidate's glue and builds its kernel.c; returns why it could not be built."""
        dest = os.path.join(self.root, name)
        os.makedirs(dest)
        shutil.copy(os.path.join(FIXTURES, name, "model_new.py"), dest)
        source = os.path.join(FIXTURES, name, "kernel.c")
        if not os.path.exists(source):
            return None
        with open(source, encoding="utf-8") as f:
            libs = ["-lsqlite3"] if "<sqlite3.h>" in f.read() else []
        if libs and not os.path.exists("/usr/include/sqlite3.h"):
            return "SQLite's header is not installed (Debian package libsqlite3-dev)"
        cmd = [os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-pthread", *self._defines(),
               "-o", os.path.join(dest, "kernel.so"), source, "-lm", *libs]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"building {name}/kernel.c failed:\n{done.stderr}")
        return None

    def kernel(self, name: str) -> str:
        if name in self.unbuilt:
            raise unittest.SkipTest(f"{name} cannot be built here: {self.unbuilt[name]}")
        return os.path.join(self.root, name, "model_new.py")

    def store_rows(self) -> List[Tuple[Any, ...]]:
        with contextlib.closing(sqlite3.connect(f"file:{self.store}?mode=ro", uri=True)) as db:
            return [tuple(r) for r in db.execute("SELECT id, status, speedup FROM runs ORDER BY id")]

    def store_integrity(self) -> str:
        with contextlib.closing(sqlite3.connect(f"file:{self.store}?mode=ro", uri=True)) as db:
            return str(db.execute("PRAGMA integrity_check").fetchone()[0])

    def connection_attempted(self, wait_s: float = 0.3) -> bool:
        readable, _, _ = select.select([self.listener], [], [], wait_s)
        if readable:
            conn, _ = self.listener.accept()
            conn.close()
        return bool(readable)

    def close(self) -> None:
        self.listener.close()
        shutil.rmtree(self.root, ignore_errors=True)


TARGETS: Optional[Targets] = None


def targets() -> Targets:
    assert TARGETS is not None, "setUpModule builds the targets"
    return TARGETS


def setUpModule() -> None:
    global TARGETS
    if BWRAP is None:
        raise unittest.SkipTest(NO_BWRAP)
    TARGETS = Targets()


def tearDownModule() -> None:
    if TARGETS is not None:
        TARGETS.close()
    if os.environ.get("AKG_ADVERSARIAL_TABLE") and OBSERVED:
        print("\n| candidate | expected | observed | s | detail |\n| --- | --- | --- | --- | --- |", file=sys.stderr)
        for name, expected, observed, seconds, detail in OBSERVED:
            print(f"| {name} | {expected} | {observed} | {seconds:.1f} | {detail} |", file=sys.stderr)
        by_class: Dict[str, float] = {}
        for test, seconds in DURATIONS.items():
            by_class[test.split(".")[0]] = by_class.get(test.split(".")[0], 0.0) + seconds
        print("test seconds, by class: " + ", ".join(f"{k} {v:.1f}" for k, v in by_class.items()), file=sys.stderr)
        slow = sorted(DURATIONS.items(), key=lambda kv: -kv[1])[:8]
        print("slowest: " + ", ".join(f"{k} {v:.1f}" for k, v in slow), file=sys.stderr)


def marked_line(name: str) -> int:
    """The line of the fixture's glue that carries the mark: the one the static check must name."""
    with open(os.path.join(FIXTURES, name, "model_new.py"), encoding="utf-8") as f:
        lines = [i for i, text in enumerate(f, 1) if MARK in text]
    assert len(lines) == 1, f"{name}: expected one line marked {MARK!r}, found {lines}"
    return lines[0]


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _stat_fields(pid: str) -> List[str]:
    """/proc/<pid>/stat after the command name (state, ppid, ...; starttime is [19]); empty when
    the process is gone."""
    text = _read(f"/proc/{pid}/stat")
    return text.rsplit(")", 1)[1].split() if ")" in text else []


def candidate_processes(worker_pid: int) -> Dict[str, List[Tuple[int, str]]]:
    """The processes of a worker's candidates, (pid, command) by group: their cgroup
    (``akg-<worker pid>-<n>``); "outside the cgroups" for a descendant of the worker (the worker
    itself excepted) that is in none; "naming the suite's folder" for any process whose command
    line names the suite's temporary folder. Zombies are left out (they hold nothing)."""
    marker = f"/akg-{worker_pid}-"
    parents: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        fields = _stat_fields(entry) if entry.isdigit() else []
        if len(fields) > 1 and fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    found: Dict[str, List[Tuple[int, str]]] = {}
    for pid in parents:
        if pid in (os.getpid(), worker_pid):
            continue
        cmdline = _read(f"/proc/{pid}/cmdline").replace("\0", " ").strip()
        match = re.search(re.escape(marker) + r"\d+", _read(f"/proc/{pid}/cgroup"))
        ancestor, hops = parents.get(pid, 0), 0
        while ancestor not in (0, 1, worker_pid) and hops < 64:
            ancestor, hops = parents.get(ancestor, 0), hops + 1
        if match:
            group = match.group(0).lstrip("/")
        elif ancestor == worker_pid:
            group = "outside the cgroups"
        elif TARGETS is not None and TARGETS.root in cmdline:
            group = "naming the suite's folder"
        else:
            continue
        found.setdefault(group, []).append((pid, cmdline))
    return found


def cgroup_dirs_left(worker_pid: int) -> List[str]:
    """The cgroup folders of a worker's candidates that still exist."""
    left: List[str] = []
    own: Dict[str, str] = {}
    for line in _read("/proc/self/cgroup").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                own[controller] = parts[2]
    for controller, path in own.items():
        base = os.path.join("/sys/fs/cgroup", controller) + path if controller else "/sys/fs/cgroup" + path
        try:
            names = os.listdir(base)
        except OSError:
            continue
        left += [os.path.join(base, n) for n in names if n.startswith(f"akg-{worker_pid}-")]
    return left


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class SuiteWorker(Worker):
    """The real worker with the candidates' sandbox settings and a key in its environment."""

    def __init__(self, sandbox: Dict[str, Any]) -> None:
        super().__init__({"AKG_SANDBOX": json.dumps({"mode": "bwrap", **sandbox}), "AKG_TEST_SECRET": SECRET})

    def next_message(self, timeout: float = REQUEST_TIMEOUT_S) -> Dict[str, Any]:
        return super().next_message(timeout)


class HostileSuite(unittest.TestCase):
    """One worker for the class's candidates (SANDBOX: its AKG_SANDBOX settings)."""

    SANDBOX: Dict[str, Any] = {}
    worker: SuiteWorker
    worker_pid: int
    next_id = 10_000

    @classmethod
    def setUpClass(cls) -> None:
        cls.worker = SuiteWorker(cls.SANDBOX)
        cls.worker_pid = cls.worker.proc.pid
        cls.closed = False
        sandbox = cls.worker.ready.get("sandbox") or {}
        if sandbox.get("mode") != "bwrap":
            cls.worker.close()
            raise AssertionError(f"the worker could not set up its sandbox: {sandbox}")

    @classmethod
    def tearDownClass(cls) -> None:
        if not cls.closed:
            cls.worker.close()

    def setUp(self) -> None:
        self._started = time.monotonic()

    def tearDown(self) -> None:
        DURATIONS[self.id().rsplit(".", 2)[-2] + "." + self._testMethodName] = time.monotonic() - self._started

    # ---------- requests ----------

    def ask(self, op: str, name: str, ref: str = "relu_ref.py", rid: Optional[int] = None,
            **fields: Any) -> Dict[str, Any]:
        if rid is None:
            type(self).next_id += 1
            rid = self.next_id
        request = {"id": rid, "op": op, "reference": os.path.join(REFS, ref),
                   "kernel": targets().kernel(name), "seed": 0}
        if op == "verify":
            request["trials"] = 2
        else:
            request.update({"runs": 10, "warmup": 1})
        request.update(fields)
        start = time.monotonic()
        answer = self.worker.request(request)
        answer["_seconds"] = time.monotonic() - start
        return answer

    def record(self, name: str, expected: str, answers: List[Dict[str, Any]]) -> None:
        seen = []
        for a in answers:
            seen.append("ok" if a.get("ok") else str(a.get("class")))
        detail = next((str(a.get("detail", "")) for a in reversed(answers) if not a.get("ok")), "")
        OBSERVED.append((name, expected, " / ".join(seen), sum(a.get("_seconds", 0.0) for a in answers),
                         detail.replace("\n", " ")[:300]))

    def assert_refused(self, answer: Dict[str, Any], error_class: Any, *phrases: str) -> None:
        classes = (error_class,) if isinstance(error_class, str) else tuple(error_class)
        self.assertFalse(answer.get("ok"), f"a hostile candidate passed: {answer}")
        self.assertIn(answer.get("class"), classes, answer)
        self.assertEqual(answer.get("where"), "kernel", answer)
        for phrase in phrases:
            self.assertIn(phrase, answer.get("detail", ""), answer)

    def assert_honest_unharmed(self, after: str) -> None:
        """The honest ReLU still verifies and profiles on this worker."""
        verified = self.ask("verify", "honest_relu")
        self.assertTrue(verified.get("ok"), f"after {after}, the honest candidate failed verify: {verified}")
        self.assertEqual(verified["max_abs_err"], 0.0, verified)
        profiled = self.ask("profile", "honest_relu")
        self.assertTrue(profiled.get("ok"), f"after {after}, the honest candidate failed profile: {profiled}")
        self.assert_no_strays(after)

    def assert_no_strays(self, what: str) -> None:
        """At most one candidate process per cgroup (a spare's, or the current candidate's) and no
        process naming the suite's folder: nothing a candidate forked is left."""
        deadline = time.monotonic() + 5.0
        while True:
            strays = {}
            for group, procs in candidate_processes(self.worker_pid).items():
                if not group.startswith("akg-") or len(self._python_processes(procs)) > 1:
                    strays[group] = procs
            if not strays or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(strays, {}, f"processes left behind by {what}")

    @staticmethod
    def _python_processes(procs: List[Tuple[int, str]]) -> List[Tuple[int, str]]:
        """The candidate's own processes among a cgroup's (bubblewrap's two left out)."""
        return [p for p in procs if not os.path.basename(p[1].split(" ")[0]).startswith("bwrap")]

    def assert_static_refusal(self, name: str, construct: str) -> None:
        answer = self.ask("verify", name)
        self.record(name, "forbidden", [answer])
        self.assert_refused(answer, "forbidden", construct)
        self.assertEqual(answer.get("line"), marked_line(name), answer)
        self.assertEqual(answer.get("file"), targets().kernel(name), answer)
        self.assert_honest_unharmed(name)

    # ---------- the end of a worker ----------

    def end_worker(self) -> None:
        """Shuts the worker down: status 0, no process of its candidates left (those seen just before
        nor any other), no cgroup left, the key never in its log."""
        before = {pid: _stat_fields(str(pid))[19:20] for procs in candidate_processes(self.worker_pid).values()
                  for pid, _ in procs}
        self.assertTrue(before, "the worker had no candidate process to end: the check would prove nothing")
        log = self.worker.log_text()
        rc = self.worker.close()
        type(self).closed = True
        self.assertEqual(rc, 0, log[-3000:])

        def left() -> List[Any]:
            survivors = [pid for pid, start in before.items() if _stat_fields(str(pid))[19:20] == start
                         and _stat_fields(str(pid))[0] != "Z"]
            return survivors + list(candidate_processes(self.worker_pid).items()) + cgroup_dirs_left(self.worker_pid)

        deadline = time.monotonic() + 5.0
        while left() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(left(), [], "processes or cgroups of the candidates left after the worker ended")
        self.assertNotIn(SECRET, log, "the worker's log shows the key of its environment")
        self.assertEqual(_read(targets().sentinel), SENTINEL_TEXT, "the sentinel changed")
        self.assertEqual(_read(targets().report), REPORT_TEXT, "report.json changed")
        self.assertEqual(targets().store_rows(), STORE_ROWS, "the store's rows changed")
        self.assertEqual(targets().store_integrity(), "ok")


@unittest.skipIf(BWRAP is None, NO_BWRAP)
class DefaultSandboxTest(HostileSuite):
    """The default sandbox: static refusals, native attacks that need no special limit, judge cheats."""

    SANDBOX: Dict[str, Any] = {}

    # ---------- Python: the static check ----------

    def test_py_torch_fallback(self) -> None:
        self.assert_static_refusal("py_torch_fallback", "torch.relu")

    def test_py_try_except_fallback(self) -> None:
        self.assert_static_refusal("py_try_except_fallback", "torch.relu")

    def test_py_thread(self) -> None:
        self.assert_static_refusal("py_thread", "imports threading")

    def test_py_torchscript(self) -> None:
        self.assert_static_refusal("py_torchscript", "torch.jit.script")

    def test_py_pop_mode(self) -> None:
        self.assert_static_refusal("py_pop_mode", "torch._C._pop_torch_function_stack")

    def test_py_overrides(self) -> None:
        self.assert_static_refusal("py_overrides", "torch.overrides")

    def test_py_ctypes_libtorch(self) -> None:
        self.assert_static_refusal("py_ctypes_libtorch", "libtorch_cpu.so")

    def test_py_ctypes_process(self) -> None:
        self.assert_static_refusal("py_ctypes_process", "ctypes.CDLL(None)")

    def test_py_numpy_dlpack(self) -> None:
        self.assert_static_refusal("py_numpy_dlpack", "imports numpy")

    def test_py_tolist(self) -> None:
        self.assert_static_refusal("py_tolist", "tolist()")

    def test_py_patch_equal(self) -> None:
        self.assert_static_refusal("py_patch_equal", "assigns to torch.equal")

    def test_py_patch_randn(self) -> None:
        self.assert_static_refusal("py_patch_randn", "assigns to torch.randn")

    def test_py_patch_seed(self) -> None:
        self.assert_static_refusal("py_patch_seed", "assigns to torch.manual_seed")

    def test_py_getframe(self) -> None:
        self.assert_static_refusal("py_getframe", "imports sys")

    def test_py_traceback_frames(self) -> None:
        self.assert_static_refusal("py_traceback_frames", "tb_frame")

    def test_py_inspect(self) -> None:
        self.assert_static_refusal("py_inspect", "imports inspect")

    def test_py_exec(self) -> None:
        self.assert_static_refusal("py_exec", "uses exec")

    def test_py_eval(self) -> None:
        self.assert_static_refusal("py_eval", "uses eval")

    def test_py_dunder_import(self) -> None:
        self.assert_static_refusal("py_dunder_import", "uses __import__")

    def test_py_torch_dispatch(self) -> None:
        self.assert_static_refusal("py_torch_dispatch", "defines __torch_dispatch__")

    def test_py_detect_guard(self) -> None:
        self.assert_static_refusal("py_detect_guard", "torch._C._len_torch_function_stack")

    def test_py_patch_allowlist(self) -> None:
        self.assert_static_refusal("py_patch_allowlist", "imports from akg_harness")

    def test_py_patch_reference(self) -> None:
        self.assert_static_refusal("py_patch_reference", "imports gc")

    def test_py_forge_answer(self) -> None:
        self.assert_static_refusal("py_forge_answer", "os.write")

    # ---------- a tensor subclass as the output ----------

    def test_liar_torch_function(self) -> None:
        # The static check refuses the subclass's torch hook before anything runs.
        self.assert_static_refusal("liar_torch_function", "__torch_function__")

    def test_liar_eq_only(self) -> None:
        # Nothing to refuse statically: the judge reads the output's bytes into a plain tensor.
        answer = self.ask("verify", "liar_eq_only")
        self.record("liar_eq_only", "numerical_mismatch", [answer])
        self.assert_refused(answer, "numerical_mismatch", "worst element")
        self.assert_honest_unharmed("liar_eq_only")

    # ---------- native attacks ----------

    def test_native_segfault(self) -> None:
        answer = self.ask("verify", "native_segfault")
        self.record("native_segfault", "crash", [answer])
        self.assert_refused(answer, "crash", "SIGSEGV")
        self.assert_honest_unharmed("native_segfault")

    def test_native_exit_zero(self) -> None:
        answer = self.ask("verify", "native_exit_zero")
        self.record("native_exit_zero", "crash", [answer])
        self.assert_refused(answer, "crash", "exited (status 0)")
        self.assert_honest_unharmed("native_exit_zero")

    def test_native_network(self) -> None:
        answer = self.ask("verify", "native_network")
        self.record("native_network", "runtime_error", [answer])
        self.assertFalse(targets().connection_attempted(), "the test's listener saw a connection from a candidate")
        self.assert_refused(answer, "runtime_error", f"connecting to 127.0.0.1:{targets().port} to send the inputs "
                            "out failed")
        self.assert_honest_unharmed("native_network")

    def test_native_write_outside(self) -> None:
        answer = self.ask("verify", "native_write_outside")
        self.record("native_write_outside", "runtime_error", [answer])
        created = [p for p in (os.path.join(targets().root, "created_by_candidate"), targets().harness_file)
                   if os.path.exists(p)]
        for path in created:
            os.unlink(path)
        self.assertEqual(_read(targets().sentinel), SENTINEL_TEXT, "a candidate rewrote the sentinel")
        self.assertEqual(created, [], "a candidate created files outside its sandbox")
        self.assert_refused(answer, "runtime_error", "no file outside the sandbox could be written")
        self.assert_honest_unharmed("native_write_outside")

    def test_native_store_rewrite(self) -> None:
        before = sha256(targets().store)
        answer = self.ask("verify", "native_store_rewrite")
        self.record("native_store_rewrite", "runtime_error", [answer])
        self.assertEqual(targets().store_rows(), STORE_ROWS)
        self.assertEqual(targets().store_integrity(), "ok")
        self.assertEqual(sha256(targets().store), before)
        self.assert_refused(answer, "runtime_error", "rewriting the store", "unable to open database file")
        self.assert_honest_unharmed("native_store_rewrite")

    def test_native_report_daemon(self) -> None:
        # The first call is honest and leaves the daemon; it then has 3 s to rewrite the report.
        first = self.ask("verify", "native_report_daemon", trials=1)
        self.assertTrue(first.get("ok"), first)
        time.sleep(3.0)
        self.assertEqual(_read(targets().report), REPORT_TEXT, "the daemon rewrote report.json")
        self.assertRegex(self.worker.log_text(), r"report daemon \d+ alive, [1-9]\d* tries",
                         "the daemon never ran: the test would prove nothing")
        self.assertTrue(any(len(self._python_processes(procs)) > 1
                            for group, procs in candidate_processes(self.worker_pid).items()),
                        "the daemon is not among the candidate's processes: the check for strays would miss it")
        # The same candidate again (its child and daemon live on): it now reports the daemon's failure.
        again = self.ask("verify", "native_report_daemon")
        self.record("native_report_daemon", "ok, then runtime_error", [first, again])
        self.assert_refused(again, "runtime_error", "the report daemon", "could not rewrite")
        self.assert_no_strays("native_report_daemon")
        alive = self.worker.log_text().count("alive, ")
        time.sleep(1.5)
        self.assertEqual(self.worker.log_text().count("alive, "), alive, "the daemon outlived its candidate")
        self.assertEqual(_read(targets().report), REPORT_TEXT, "the daemon rewrote report.json")
        self.assert_honest_unharmed("native_report_daemon")

    def test_native_stop_parent(self) -> None:
        answer = self.ask("verify", "native_stop_parent")
        self.record("native_stop_parent", "runtime_error", [answer])
        self.assert_refused(answer, "runtime_error", "sent SIGSTOP to the parent process")
        self.assert_honest_unharmed("native_stop_parent")
        self.assertNotEqual(_process_state(self.worker_pid), "T", "the worker was stopped")

    def test_native_stop_everyone(self) -> None:
        answer = self.ask("verify", "native_stop_everyone")
        self.record("native_stop_everyone", "runtime_error", [answer])
        self.assert_refused(answer, "runtime_error", "sent SIGSTOP to every process it may signal")
        self.assertNotIn("refusing", answer.get("detail", ""), "the candidate found no pid namespace")
        self.assert_honest_unharmed("native_stop_everyone")
        self.assertNotEqual(_process_state(self.worker_pid), "T", "the worker was stopped")
        self.assertNotEqual(_process_state(os.getpid()), "T")

    def test_native_key_leak(self) -> None:
        answer = self.ask("verify", "native_key_leak")
        self.record("native_key_leak", "runtime_error", [answer])
        log = self.worker.log_text()
        self.assertIn("key leak probe: AKG_TEST_SECRET=", log, "the probe did not run: the test would prove nothing")
        self.assertNotIn(SECRET, log, "the key reached the candidate")
        self.assert_refused(answer, "runtime_error", "no API key reached the kernel")
        self.assert_honest_unharmed("native_key_leak")

    # The reference is never visible to a candidate: the sandbox shows the harness package and the
    # child's entry, not the harness folder (where these fixtures live), and a reference in a folder
    # the sandbox does show is masked (the judge then starts that candidate's child with a view that
    # hides it: test_reference_in_a_visible_folder_is_masked).
    def test_native_read_reference(self) -> None:
        answer = self.ask("verify", "native_read_reference")
        self.record("native_read_reference", "runtime_error", [answer])
        self.assert_refused(answer, "runtime_error", "the reference")
        self.assertNotRegex(self.worker.log_text(), r"read \d+ bytes of the reference")

    def test_native_read_reference_others_unharmed(self) -> None:
        # Whatever the reference's visibility, the candidates after it are unharmed.
        self.ask("verify", "native_read_reference")
        self.assert_honest_unharmed("native_read_reference")

    def test_native_forge_answers(self) -> None:
        answer = self.ask("verify", "native_forge_answers", rid=FORGED_ID)
        self.record("native_forge_answers", "runtime_error", [answer])
        # The client took the first line with this id as the answer (and checks that every line of
        # the worker's stdout is one JSON object): it must be the judge's refusal.
        self.assert_refused(answer, "runtime_error")
        self.assertNotIn("max_abs_err\":0.0", json.dumps(answer))
        self.assert_honest_unharmed("native_forge_answers")

    # A line the child protocol does not expect after "go" (here the forged worker answer, a JSON
    # object without "done") is refused with a detail saying the child broke the protocol.
    def test_native_forge_answers_named(self) -> None:
        answer = self.ask("verify", "native_forge_answers")
        self.assert_refused(answer, "runtime_error")
        self.assertRegex(answer["detail"], r"protocol|answer line")

    def test_native_huge_file(self) -> None:
        answer = self.ask("verify", "native_huge_file")
        self.record("native_huge_file", "resource_limit or runtime_error", [answer])
        if answer.get("class") == "resource_limit":
            self.assert_refused(answer, "resource_limit", "file_size_mb")
        else:
            self.assert_refused(answer, "runtime_error", "writing a 1 GiB file in /tmp stopped after")
            self.assertRegex(answer["detail"], r"stopped after (\d+) MiB: (File too large|No space left on device)")
            mib = int(re.search(r"stopped after (\d+) MiB", answer["detail"]).group(1))
            self.assertLessEqual(mib, self.worker.ready["sandbox"]["limits"]["file_size_mb"], answer)
        self.assert_honest_unharmed("native_huge_file")

    # ---------- judge-level cheats ----------

    def test_judge_inplace_input(self) -> None:
        answer = self.ask("verify", "judge_inplace_input")
        self.record("judge_inplace_input", "crash", [answer])
        self.assert_refused(answer, "crash", "its inputs are read-only, so writing one (in place) ends it this way")
        self.assert_honest_unharmed("judge_inplace_input")

    def test_judge_half_output(self) -> None:
        answer = self.ask("verify", "judge_half_output", ref="softmax_ref.py")
        self.record("judge_half_output", "numerical_mismatch", [answer])
        self.assert_refused(answer, "numerical_mismatch", "trial 0 (seed 0)")
        self.assertRegex(answer["detail"], r"NaN positions differ|elements out of tolerance")
        self.assert_honest_unharmed("judge_half_output")

    def test_judge_input_returned(self) -> None:
        answer = self.ask("verify", "judge_input_returned")
        self.record("judge_input_returned", "numerical_mismatch", [answer])
        self.assert_refused(answer, "numerical_mismatch", "worst element")
        self.assert_honest_unharmed("judge_input_returned")

    def test_judge_pointer_memo(self) -> None:
        answer = self.ask("verify", "judge_pointer_memo")
        self.record("judge_pointer_memo", "numerical_mismatch", [answer])
        self.assert_refused(answer, "numerical_mismatch", "trial 1")
        self.assert_honest_unharmed("judge_pointer_memo")

    def assert_passes_verify_fails_timed(self, name: str, ref: str) -> None:
        verified = self.ask("verify", name, ref=ref)
        self.assertTrue(verified.get("ok"), f"{name} was meant to pass verification: {verified}")
        profiled = self.ask("profile", name, ref=ref)
        self.record(name, "ok, then numerical_mismatch", [verified, profiled])
        self.assert_refused(profiled, "numerical_mismatch", "while it is being timed")
        self.assert_honest_unharmed(name)

    def test_judge_call_counter(self) -> None:
        self.assert_passes_verify_fails_timed("judge_call_counter", "softmax_ref.py")

    def test_judge_value_memo(self) -> None:
        self.assert_passes_verify_fails_timed("judge_value_memo", "mse_ref.py")

    def test_judge_timing_detector(self) -> None:
        self.assert_passes_verify_fails_timed("judge_timing_detector", "softmax_ref.py")

    def test_judge_late_writer(self) -> None:
        answer = self.ask("verify", "judge_late_writer")
        self.record("judge_late_writer", "late_write or numerical_mismatch", [answer])
        self.assert_refused(answer, ("late_write", "numerical_mismatch"))
        if answer["class"] == "late_write":
            self.assertIn("changed after ModelNew.forward returned", answer["detail"])
        self.assert_honest_unharmed("judge_late_writer")

    def test_judge_background_spinner(self) -> None:
        # The engine's profile settings (runs 50, warmup 5): a thread spinning all the time.
        verified = self.ask("verify", "judge_background_spinner", ref="mse_ref.py")
        self.assertTrue(verified.get("ok"), verified)
        profiled = self.ask("profile", "judge_background_spinner", ref="mse_ref.py", runs=50, warmup=5)
        self.record("judge_background_spinner", "ok, then background_work", [verified, profiled])
        self.assert_refused(profiled, "background_work", "outside its timed calls")
        self.assert_honest_unharmed("judge_background_spinner")
        self.assert_no_strays("judge_background_spinner")

    # A thread busy a quarter of the time: the judge measures the child's CPU time between its
    # batches, where an honest child sleeps (profile.BACKGROUND_IDLE_NS), so even a small duty
    # cycle on calls of a few microseconds shows.
    def test_judge_background_trickle(self) -> None:
        verified = self.ask("verify", "judge_background_trickle")
        self.assertTrue(verified.get("ok"), verified)
        profiled = self.ask("profile", "judge_background_trickle")
        self.record("judge_background_trickle", "ok, then background_work", [verified, profiled])
        self.assert_refused(profiled, "background_work", "outside its timed calls")

    def test_judge_background_trickle_others_unharmed(self) -> None:
        self.ask("verify", "judge_background_trickle")
        self.ask("profile", "judge_background_trickle")
        self.assert_honest_unharmed("judge_background_trickle")
        self.assert_no_strays("judge_background_trickle")

    def test_judge_fp16_loss(self) -> None:
        # Three trials: the last one draws precision-exposing inputs (1 + x/256), on which the
        # rounding to float16 is no longer averaged away; on Gaussian draws alone the loss passes.
        answer = self.ask("verify", "judge_fp16_loss", ref="mse_ref.py", trials=3)
        self.record("judge_fp16_loss", "numerical_mismatch", [answer])
        self.assert_refused(answer, "numerical_mismatch", "trial 2 (seed 2000)")
        self.assert_honest_unharmed("judge_fp16_loss")

    # ---------- honest candidates ----------

    def test_honest_candidates_pass(self) -> None:
        # (the honest ReLU runs after every hostile candidate)
        for name, ref in (("honest_softmax", "softmax_ref.py"), ("honest_mse", "mse_ref.py")):
            verified = self.ask("verify", name, ref=ref)
            self.assertTrue(verified.get("ok"), verified)
            profiled = self.ask("profile", name, ref=ref)
            self.assertTrue(profiled.get("ok"), profiled)
            self.assertNotIn("flags", profiled, profiled)

    def test_zz_worker_ends_clean(self) -> None:
        self.assert_honest_unharmed("the whole group")
        self.end_worker()


@unittest.skipIf(BWRAP is None, NO_BWRAP)
class ShortDeadlineTest(HostileSuite):
    """A 3 s per-call deadline: candidates that never return."""

    SANDBOX = {"call_timeout_s": 3}

    def test_native_infinite_loop(self) -> None:
        answer = self.ask("verify", "native_infinite_loop")
        self.record("native_infinite_loop", "timeout", [answer])
        self.assert_refused(answer, "timeout", "did not finish", "within 3 s")
        self.assertLess(answer["_seconds"], 20.0, answer)
        self.assert_honest_unharmed("native_infinite_loop")

    def test_native_stop_self(self) -> None:
        answer = self.ask("verify", "native_stop_self")
        self.record("native_stop_self", "timeout", [answer])
        self.assert_refused(answer, "timeout", "within 3 s")
        self.assert_honest_unharmed("native_stop_self")
        self.assert_no_strays("native_stop_self")

    def test_native_fork_bomb(self) -> None:
        limits = self.worker.ready["sandbox"]["detail"]
        if "processes" not in limits or "(cgroup)" not in limits.split("processes", 1)[1][:40]:
            self.skipTest(f"the sandbox limits processes without a pids cgroup here ({limits}): no fork bomb")
        answer = self.ask("verify", "native_fork_bomb")
        self.record("native_fork_bomb", "timeout or resource_limit", [answer])
        self.assert_refused(answer, ("timeout", "resource_limit"))
        self.assertNotIn("refusing", answer.get("detail", ""), "the candidate found no pid namespace")
        self.assert_no_strays("native_fork_bomb")
        self.assert_honest_unharmed("native_fork_bomb")

    def test_zz_worker_ends_clean(self) -> None:
        self.assert_honest_unharmed("the whole group")
        self.end_worker()


@unittest.skipIf(BWRAP is None, NO_BWRAP)
class SmallMemoryTest(HostileSuite):
    """1024 MB of memory: a candidate that allocates 8 GiB."""

    SANDBOX = {"memory_mb": 1024}

    def test_native_huge_allocation(self) -> None:
        answer = self.ask("verify", "native_huge_allocation")
        self.record("native_huge_allocation", "resource_limit", [answer])
        self.assert_refused(answer, "resource_limit", "memory limit of 1024 MB")
        self.assert_honest_unharmed("native_huge_allocation")

    def test_zz_worker_ends_clean(self) -> None:
        self.assert_honest_unharmed("the whole group")
        self.end_worker()


def _process_state(pid: int) -> str:
    """The state letter of /proc/<pid>/stat ("T" when stopped); "" when gone."""
    fields = _stat_fields(str(pid))
    return fields[0] if fields else ""


if __name__ == "__main__":
    unittest.main()
