"""The interactive CLI driven through a pseudo-terminal, as a person at a terminal would.

One session of `akg_cli op` without a reference: a pasted KernelBench reference, a typed request
and a pasted function (the TaskConstructor asks for its input's shape; an answer of the wrong
form is refused and asked again) each end in a verified
kernel (report.json status pass), an impossible request ends in a clear message and the prompt
again, Ctrl-C drops a typed line and cancels a run, and Ctrl-D then ends the session with
status 0. Also: without
a terminal on stdin and no file, the command still fails at once (scripts do not hang).
"""
import fcntl
import json
import os
import re
import select
import signal
import subprocess
import tempfile
import termios
import time
import unittest

SOURCE = os.environ.get("AKG_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli")
PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")

PASTED = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Row softmax, pasted into the session."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(16, 64) * 3]


def get_init_inputs():
    return []
'''

PROMPT = "akg> "


class Terminal:
    """akg_cli on the slave side of a pty; reads what it shows from the master side."""

    def __init__(self, args, cwd, env):
        self.master, slave = os.openpty()
        # the terminal is the session's controlling one, so Ctrl-C is a SIGINT as at a shell
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=slave, stdout=slave,
                                     stderr=slave, start_new_session=True,
                                     preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
        self.shown = ""

    def expect(self, pattern, timeout, since=0):
        """Reads until pattern (a regex) appears after offset since; returns the match."""
        deadline = time.monotonic() + timeout
        while True:
            m = re.compile(pattern, re.M).search(self.shown, since)
            if m:
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("waited %.0f s for %r; the terminal shows:\n%s" %
                                     (timeout, pattern, self.shown[since:][-4000:]))
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # the session ended: nothing more will come
                    data = b""
                if not data:
                    raise AssertionError("the session ended while waiting for %r:\n%s" %
                                         (pattern, self.shown[since:][-4000:]))
                self.shown += data.decode("utf-8", "replace").replace("\r\n", "\n")

    def send(self, text):
        os.write(self.master, text.encode())

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        os.close(self.master)


class InteractiveTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-interactive-")
        self.dir = self.tmp.name
        home = os.path.join(self.dir, "home")
        os.mkdir(home)
        self.env = dict(os.environ, AKG_STORE=os.path.join(self.dir, "akg.db"),
                        AKG_PYTHON=PYTHON, AKG_HOME=SOURCE, HOME=home, TERM="dumb",
                        INPUTRC="/dev/null")
        self.env.pop("XDG_STATE_HOME", None)

    def tearDown(self):
        self.tmp.cleanup()

    def report_of(self, shown):
        """The report.json a run's summary names, loaded."""
        m = re.search(r"^report\s+(\S+)$", shown, re.M)
        self.assertIsNotNone(m, "no report line in:\n" + shown[-3000:])
        path = m.group(1)
        if not os.path.isabs(path):
            path = os.path.join(self.dir, path)
        with open(path) as f:
            return json.load(f)

    def test_session(self):
        started = time.monotonic()
        term = Terminal([CLI, "op", "--backend", "cpu", "--dsl", "cpp", "--trials", "2",
                         "--profile-runs", "3", "--min-speedup", "0", "--max-step", "2",
                         "--output", os.path.join(self.dir, "runs")],
                        cwd=self.dir, env=self.env)
        try:
            term.expect(re.escape(PROMPT), 30)

            # 1. a pasted reference (its blank lines inside, one blank line after it)
            at = len(term.shown)
            term.send(PASTED + "\n")
            m = term.expect(r"^status:\s+(\w+)$", 120, at)
            term.expect(re.escape(PROMPT), 30, m.end())
            shown = term.shown[at:]
            self.assertIn("a KernelBench reference", shown)
            self.assertEqual(m.group(1), "pass", shown[-3000:])
            report = self.report_of(shown)
            self.assertEqual(report["status"], "pass")
            with open(os.path.join(self.dir, ".akg", "tasks", "pasted_1.py")) as f:
                self.assertEqual(f.read(), PASTED)

            # 2. Ctrl-C drops a half-typed line, and cancels a running pipeline (the next run
            # then shows that the session goes on)
            at = len(term.shown)
            term.send("relu of a 8x8")
            term.expect(r"relu of a 8x8", 10, at)
            term.send("\x03")
            term.expect(r"\^C\n" + re.escape(PROMPT), 10, at)
            term.send("softmax of a 64x64 tensor\n")
            term.expect(r"^\[akg\] (parse|probe)", 30, at)
            term.send("\x03")
            m = term.expect(r"^status:\s+(\w+)$", 60, at)
            term.expect(re.escape(PROMPT), 30, m.end())
            self.assertEqual(m.group(1), "cancelled", term.shown[at:][-3000:])
            self.assertNotIn("request: relu", term.shown[at:])

            # 3. a typed request
            at = len(term.shown)
            term.send("relu of a 32x64 float32 tensor\n")
            m = term.expect(r"^status:\s+(\w+)$", 120, at)
            term.expect(re.escape(PROMPT), 30, m.end())
            shown = term.shown[at:]
            self.assertIn("akg: request: relu of a 32x64 float32 tensor", shown)
            self.assertEqual(m.group(1), "pass", shown[-3000:])
            self.assertEqual(self.report_of(shown)["status"], "pass")
            task = os.path.join(self.dir, ".akg", "tasks", "relu_32x64_float32.py")
            with open(task) as f:
                self.assertIn("torch.relu(x)", f.read())

            # 4. a model snippet: the TaskConstructor asks for the shape it cannot know
            at = len(term.shown)
            term.send("def scaled_tanh(x):\n    return torch.tanh(x) * 2\n\n")
            q = term.expect(r"shape of `x` .*\? $", 30, at)
            term.send("16 by 32\n")  # not of the form asked: said so, and asked again
            q = term.expect(r"`by` is not a size; .*answer again", 30, q.end())
            term.expect(r"shape of `x` .*\? $", 30, q.end())
            term.send("16x32\n")
            m = term.expect(r"^status:\s+(\w+)$", 120, at)
            term.expect(re.escape(PROMPT), 30, m.end())
            shown = term.shown[at:]
            self.assertIn("added `# akg: x: f32[16, 32]` above the paste", shown)
            self.assertEqual(m.group(1), "pass", shown[-3000:])
            self.assertEqual(self.report_of(shown)["status"], "pass")
            with open(os.path.join(self.dir, ".akg", "tasks", "scaled_tanh.py")) as f:
                self.assertIn("scaled_tanh", f.read())

            # 5. an impossible request: a clear message, the prompt again, no run
            at = len(term.shown)
            term.send("sort a 1000-element tensor by magnitude\n")
            m = term.expect(re.escape(PROMPT), 30, at)
            shown = term.shown[at:]
            self.assertIn('not understood: "sort"', shown)
            self.assertIn("paste a KernelBench reference", shown)
            self.assertNotIn("status:", shown)

            # 6. Ctrl-D leaves cleanly
            term.send("\x04")
            try:
                term.expect(r"(?!)", 30, len(term.shown))  # reads until the session closes
            except AssertionError:
                pass
            self.assertEqual(term.proc.wait(timeout=10), 0, term.shown[-2000:])
            history = os.path.join(self.env["HOME"], ".akg", "history")
            with open(history) as f:
                self.assertIn("relu of a 32x64 float32 tensor", f.read())
        finally:
            term.close()
        print("interactive session: %.1f s" % (time.monotonic() - started))

    def test_no_terminal_no_file(self):
        p = subprocess.run([CLI, "op", "--backend", "cpu", "--dsl", "cpp"], cwd=self.dir,
                           env=self.env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("a REFERENCE.py is required", p.stderr)


if __name__ == "__main__":
    unittest.main()
