"""`akg_cli task` when the TaskConstructor cannot know a shape: it asks, never guesses.

At a terminal (a pseudo-terminal here, as a person would type) it asks for the module's
constructor arguments, each input's dtype and sizes, and then the value of a size symbol an
answer used; an answer of the wrong form gets a clear error and the question again; the
reference is built from the answers (and run once in the harness), the model file is left as it
was, and the closing note shows the comments to keep. Ctrl-D at a question ends with no
reference. Without a terminal on stdin it fails at once with the comments to add, asks nothing
and saves nothing. About 15 s (the harness's run imports torch).
"""
import os
import re
import select
import subprocess
import tempfile
import time
import unittest

SOURCE = os.environ.get("AKG_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli")
PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")

MODEL = '''import torch
import torch.nn as nn


class Gated(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, y):
        return self.fc(x) * torch.sigmoid(y)
'''


class Terminal:
    """akg_cli with a pseudo-terminal as stdin, stdout and stderr."""

    def __init__(self, args, cwd, env):
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=slave, stdout=slave,
                                     stderr=slave, start_new_session=True)
        os.close(slave)
        self.shown = ""

    def expect(self, pattern, timeout=10, since=0):
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
                except OSError:
                    data = b""
                if not data and self.proc.poll() is not None:
                    raise AssertionError("akg_cli ended (%s) before %r; it showed:\n%s" %
                                         (self.proc.returncode, pattern, self.shown[-4000:]))
                self.shown += data.decode("utf-8", "replace").replace("\r\n", "\n")

    def answer(self, question, text, since=0):
        """Waits for the question (a regex) after since, types text; the offset after it."""
        m = self.expect(question, 10, since)
        os.write(self.master, text.encode() + b"\n")
        return m.end()

    def finish(self, timeout=120):
        """Reads what is left until akg_cli exits; its status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                self.shown += data.decode("utf-8", "replace").replace("\r\n", "\n")
                if not data:
                    break
            elif self.proc.poll() is not None:
                break
        status = self.proc.wait(timeout=max(1, deadline - time.monotonic()))
        os.close(self.master)
        return status


class AskTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-task-ask-")
        self.dir = self.tmp.name
        self.env = dict(os.environ, AKG_STORE=os.path.join(self.dir, "akg.db"),
                        AKG_PYTHON=PYTHON, AKG_HOME=SOURCE, HOME=self.dir, TERM="dumb")
        self.model = os.path.join(self.dir, "gated.py")
        with open(self.model, "w") as f:
            f.write(MODEL)
        self.out = os.path.join(self.dir, "gated_task.py")
        self.select = str(MODEL.splitlines().index("class Gated(nn.Module):") + 1)

    def tearDown(self):
        self.tmp.cleanup()

    def test_asks_at_a_terminal_checks_each_answer_and_builds(self):
        term = Terminal([CLI, "task", self.model, "--select", self.select, "--output", self.out],
                        self.dir, self.env)
        at = term.answer(r"arguments to construct Gated .*\? $", "[64]")
        x_question = r"shape of `x` \(read by Gated, line 10\): DTYPE\[SIZES\] .*\? $"
        at = term.answer(x_question, "f99[8, 64]", at)
        at = term.answer(r"`f99` is not a dtype akg knows; write one of f32, .*answer again", "", at)
        # the empty line above is no answer: asked again; then a size of 0, then a good one
        at = term.answer(r"no answer given; answer again", "8x0", at)
        at = term.answer(r"`0` is not a size above 0.*answer again", "8x64", at)
        at = term.answer(r"shape of `y` .*\? $", "f32[B, 64]", at)
        at = term.answer(r"value of `B` \(a size in the shape of `y`, as you answered\).*\? $",
                         "eight", at)
        at = term.answer(r"`eight` is not a whole number above 0.*answer again", "8", at)
        status = term.finish()
        self.assertEqual(status, 0, term.shown[-3000:])
        self.assertIn("built with your answers; to keep them, put these lines above line 5 of",
                      term.shown)
        for line in ("# akg: init = [64]", "# akg: x: f32[8, 64]", "# akg: y: f32[B, 64]",
                     "# akg: B = 8"):
            self.assertIn("\n" + line + "\n", term.shown[at:])
        with open(self.out) as f:
            reference = f.read()
        self.assertIn("lines 5-5 (Gated)", reference.splitlines()[0])  # the file's lines
        self.assertIn("torch.randn((8, 64), dtype=torch.float32)", reference)
        self.assertIn("torch.randn((B, 64), dtype=torch.float32)", reference)
        self.assertIn("return _akg_inputs(B=8)", reference)
        self.assertIn("def get_init_inputs():\n    return [64]", reference)
        with open(self.model) as f:
            self.assertEqual(f.read(), MODEL)  # the user's file is not touched
        # the reference runs and draws what was answered
        run = subprocess.run([PYTHON, "-c", (
            "import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('t', sys.argv[1])\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "ins = m.get_inputs(); out = m.Model(*m.get_init_inputs())(*ins)\n"
            "print([tuple(t.shape) for t in ins], tuple(out.shape))\n"), self.out],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        self.assertEqual(run.stdout.strip(), "[(8, 64), (8, 64)] (8, 64)")

    def test_ctrl_d_at_a_question_builds_nothing(self):
        term = Terminal([CLI, "task", self.model, "--select", self.select, "--output", self.out,
                         "--no-check"], self.dir, self.env)
        term.expect(r"arguments to construct Gated .*\? $")
        os.write(term.master, b"\x04")
        status = term.finish(30)
        self.assertEqual(status, 1, term.shown[-2000:])
        self.assertIn("no answer, so no reference was built", term.shown)
        self.assertFalse(os.path.exists(self.out))

    def test_without_a_terminal_it_fails_with_the_lines_to_add(self):
        p = subprocess.run([CLI, "task", self.model, "--select", self.select, "--output",
                            self.out], cwd=self.dir, env=self.env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertIn("cannot know how to construct class Gated", p.stderr)
        self.assertIn("stdin is not a terminal, so nothing was asked (and nothing is guessed); "
                      "put these lines above line 5 of", p.stderr)
        self.assertIn("\n    # akg: init = [?]\n    # akg: x: f32[?]\n    # akg: y: f32[?]\n",
                      p.stderr)
        self.assertNotIn("DTYPE[SIZES]", p.stderr)  # no question was put
        self.assertFalse(os.path.exists(self.out))

        # those lines, filled in, build it with no question
        lines = MODEL.splitlines(True)
        at = int(self.select) - 1
        lines[at:at] = ["# akg: init = [64]\n", "# akg: x: f32[8, 64]\n", "# akg: y: f32[8, 64]\n"]
        with open(self.model, "w") as f:
            f.write("".join(lines))
        p = subprocess.run([CLI, "task", self.model, "--select", str(at + 4), "--no-save",
                            "--no-check"], cwd=self.dir, env=self.env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.count("torch.randn((8, 64), dtype=torch.float32)"), 2)

        # left as placeholders: refused, never guessed
        with open(self.model, "w") as f:
            f.write("".join(lines).replace("f32[8, 64]", "f32[?]"))
        p = subprocess.run([CLI, "task", self.model, "--select", str(at + 4), "--no-save",
                            "--no-check"], cwd=self.dir, env=self.env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("the shape comment for `x` (an input of Gated) still holds the placeholder "
                      "`?`", p.stderr)
        self.assertIn("fill in the `?` of the shape comment for `y` at line %d of" % (at + 3),
                      p.stderr)
        self.assertNotIn("    # akg:", p.stderr)  # nothing more to add


if __name__ == "__main__":
    unittest.main()
