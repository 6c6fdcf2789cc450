"""End to end: a job killed by SIGKILL leaves a sound store, no process behind, and a run that
the next akg_cli marks interrupted; a run whose owner still lives is left running.

The killed job is `akg_cli op` on a reference whose forward sleeps (slow_refs/slow_forward.py),
killed with its whole process group while its candidate is being verified. The harness worker
leads a process group of its own and dies with akg_cli through PR_SET_PDEATHSIG, and the
candidate's sandboxed child dies with the worker. The job's processes are every descendant of
akg_cli just before the kill (each known by pid and start time, so a reused pid is not taken
for a survivor), and any process whose command line names the test's unique folder (the job's
output, its reference, its store)."""
import os
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
import unittest

from akgtest import CLI, CliTest

HERE = os.path.dirname(os.path.abspath(__file__))
SLOW_REF = os.path.join(HERE, "slow_refs", "slow_forward.py")


def boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


def proc_stat(pid):
    """(ppid, state, start time) of a process, or None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), fields[0], int(fields[19])


def descendants(root):
    """{pid: start time} of every process below root."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st:
                children.setdefault(st[0], []).append((int(name), st[2]))
    found, todo = {}, [root]
    while todo:
        for pid, start in children.get(todo.pop(), []):
            if pid not in found:
                found[pid] = start
                todo.append(pid)
    return found


def survivors(known):
    """Those of known ({pid: start time}) still running: same start time, not a zombie."""
    left = []
    for pid, start in known.items():
        st = proc_stat(pid)
        if st and st[2] == start and st[1] not in "ZX":
            left.append(pid)
    return left


def processes_mentioning(text):
    """(pid, command line) of every process but this one whose command line contains text."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(os.path.join("/proc", name, "cmdline"), "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            found.append((int(name), cmd.strip()))
    return found


class InterruptTest(CliTest):
    def store_path(self):
        return os.path.join(self.dir, "akg.db")

    def read_only(self):
        return sqlite3.connect("file:%s?mode=ro" % self.store_path(), uri=True, timeout=5)

    def run_rows(self):
        """{id: status} from the store, read-only; {} while it does not exist yet."""
        if not os.path.exists(self.store_path()):
            return {}
        db = self.read_only()
        try:
            return dict(db.execute("SELECT id, status FROM runs"))
        except sqlite3.OperationalError:  # the schema is being created
            return {}
        finally:
            db.close()

    def test_sigkill_then_interrupted(self):
        ref = os.path.join(self.dir, "slow_forward.py")
        shutil.copy(SLOW_REF, ref)
        out = os.path.join(self.dir, "run")
        proc = subprocess.Popen([CLI, "op", "--output", out, "--max-step", "1", "--trials", "3",
                                 ref], cwd=self.dir, env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        killed = False
        try:
            # the run is in the store as running, and its candidate is being verified
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and proc.poll() is None:
                if ("running" in self.run_rows().values()
                        and any("verify  attempt 1/1" in line for line in lines)):
                    break
                time.sleep(0.1)
            self.assertIsNone(proc.poll(), "akg_cli ended before it could be killed:\n"
                              + "".join(lines[-30:]))
            self.assertIn("running", self.run_rows().values(), "".join(lines[-30:]))
            time.sleep(0.3)  # the candidate and the reference's slow forward are running
            job = descendants(proc.pid)
            self.assertTrue(job, "akg_cli has no harness worker")
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            proc.wait(timeout=30)
        finally:
            if not killed:  # the test failed: leave nothing running
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=30)
        reader.join(timeout=10)
        proc.stderr.close()
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        (run_id,) = [i for i, s in self.run_rows().items() if s == "running"]

        # the file is sound
        db = self.read_only()
        try:
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
        finally:
            db.close()

        # nothing of the job is left: the worker dies with akg_cli (PDEATHSIG), its candidate's
        # child with the worker, within a second
        def left():
            named = {pid: cmd for pid, cmd in processes_mentioning(self.dir)}
            for pid in survivors(job):
                try:
                    with open("/proc/%d/cmdline" % pid, "rb") as f:
                        named[pid] = f.read().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    pass
            return named

        deadline = time.monotonic() + 1.0
        alive = left()
        while alive and time.monotonic() < deadline:
            time.sleep(0.05)
            alive = left()
        for pid in alive:  # leave the machine clean before failing
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.assertEqual(alive, {}, "processes of the killed job outlived it")

        # the next akg_cli to open the store finds the owner gone: the run was interrupted
        p = self.akg("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        row = [line for line in p.stdout.splitlines() if line.split()[:1] == [str(run_id)]]
        self.assertEqual(len(row), 1, p.stdout)
        self.assertIn("interrupted", row[0])
        self.assertIn("slow_forward.py", row[0])
        self.assertIn("the process running it ended without finishing it", p.stdout)
        db = self.read_only()
        try:
            status, finished = db.execute("SELECT status, finished_at FROM runs WHERE id=?",
                                          (run_id,)).fetchone()
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
        finally:
            db.close()
        self.assertEqual(status, "interrupted")
        self.assertIsNotNone(finished)

    def test_live_owner_keeps_its_run(self):
        # the store exists (akg_cli runs creates it), then a row owned by this test's process,
        # alive, and one by a process that has ended
        p = self.akg("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        ended = subprocess.Popen(["true"])
        ended.wait()
        db = sqlite3.connect(self.store_path(), timeout=5)
        try:
            rows = {}
            for name, pid in (("live", os.getpid()), ("dead", ended.pid)):
                cur = db.execute(
                    "INSERT INTO runs(reference_path, content_hash, backend, dsl, workflow,"
                    " started_at, owner_pid, owner_boot) VALUES(?, 'h', 'cpu', 'cpp', 'default',"
                    " '2026-01-01T00:00:00Z', ?, ?)", ("/w/%s.py" % name, pid, boot_id()))
                rows[name] = cur.lastrowid
            db.commit()
        finally:
            db.close()

        def status(run_id):
            db = self.read_only()
            try:
                return db.execute("SELECT status FROM runs WHERE id=?", (run_id,)).fetchone()[0]
            finally:
                db.close()

        # another akg_cli opens the store: only the dead owner's run changes
        p = self.akg("runs", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(status(rows["live"]), "running")
        self.assertEqual(status(rows["dead"]), "interrupted")
        # and an engine (akg_cli op) opening it leaves the live owner's run alone too
        p = self.akg("op", "--workflow", "design_only", "--output",
                     os.path.join(self.dir, "design"), SLOW_REF)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertEqual(status(rows["live"]), "running")


if __name__ == "__main__":
    unittest.main(verbosity=2)
