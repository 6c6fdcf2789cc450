"""End-to-end transcript tests: code action -> job -> progress -> sketch ->
kernel -> diagnostics -> hover -> code lens, on the CPU backend with the
built-in provider. These run the real engine and the real harness (PyTorch
on the interpreter in AKG_PYTHON)."""

import os
import shutil
import sqlite3
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client, path_uri  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REFS = os.path.normpath(os.path.join(HERE, "..", "fixtures", "refs"))
JOB_TIMEOUT = 120


def descendants(pid):
    """Every live process below pid (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def wchan(pid):
    try:
        with open("/proc/%d/wchan" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def wait_worker_hung(server_pid, timeout=60):
    """Waits until a harness worker below the server is inside the fixture's
    forward, which sleeps in a loop that never ends (time.sleep shows in the
    kernel as hrtimer_nanosleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if [p for p in descendants(server_pid) if wchan(p) == "hrtimer_nanosleep"]:
            return
        time.sleep(0.02)
    raise TimeoutError("no harness worker reached the hanging forward")


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:300]
    except OSError:
        return "?"


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


class JobCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.ws = os.path.join(self.tmp.name, "ws")
        os.makedirs(self.ws)
        env = {"AKG_STORE": os.path.join(self.tmp.name, "store.db"), "HOME": self.tmp.name}
        self.settings = {"targets": ["cpu/cpp"]}
        self.c = Client(env=env, settings=self.settings, cwd=self.tmp.name)
        self.c.initialize(root=self.ws, options=self.settings)

    def tearDown(self):
        self.c.kill()
        self.tmp.cleanup()

    def copy_ref(self, name):
        dst = os.path.join(self.ws, name)
        shutil.copy(os.path.join(REFS, name), dst)
        return dst

    def run_command(self, command, arg):
        r = self.c.request("workspace/executeCommand", {"command": command, "arguments": [arg]})
        self.assertIn("result", r, r)
        return r["result"]

    def finished(self, job_id, timeout=JOB_TIMEOUT):
        return self.c.notification("akg/jobFinished", lambda p: p["id"] == job_id, timeout)["params"]

    def progress(self, token, kind, timeout=JOB_TIMEOUT):
        return self.c.notification("$/progress", lambda p: p["token"] == token and
                                   p["value"]["kind"] == kind, timeout)["params"]["value"]


class Generate(JobCase):
    def test_code_action_job_progress_diagnostics_hover_lens(self):
        path = self.copy_ref("relu.py")
        uri = self.c.open(path)
        self.c.notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
        actions = self.c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []}})["result"]
        generate = [a for a in actions if a["command"]["command"] == "akg.generate"][0]
        t0 = time.monotonic()
        result = self.run_command(generate["command"]["command"], generate["command"]["arguments"][0])
        # The command answers at once with the job's id; the job runs after.
        self.assertLess(time.monotonic() - t0, 2.0)
        job_id = result["jobId"]
        create = self.c.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create", 10,
                                 "workDoneProgress/create")
        token = create["params"]["token"]
        begin = self.progress(token, "begin")
        self.assertTrue(begin["cancellable"])
        self.assertIn("cpu/cpp", begin["title"])
        # While the job runs the server keeps answering.
        h = self.c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": 0, "character": 0}})
        self.assertIn("result", h)
        sketch = self.c.notification("akg/sketchReady", lambda p: p["id"] == job_id, JOB_TIMEOUT)["params"]
        self.assertEqual(sketch["uri"], uri)
        self.assertTrue(os.path.isfile(sketch["path"]))
        with open(sketch["path"], encoding="utf-8") as f:
            self.assertEqual(f.read(), sketch["text"])
        done = self.finished(job_id)
        self.assertEqual(done["status"], "pass", done)
        self.assertIsNone(done["error"])
        self.assertGreater(done["speedup"], 0)
        for key in ("sketch", "kernel", "modelNew", "report"):
            self.assertTrue(os.path.isfile(done["paths"][key]), (key, done["paths"]))
        reports = []
        while True:
            try:
                reports.append(self.progress(token, "report", timeout=0.01))
            except TimeoutError:
                break
        stages = " ".join(r.get("message", "") for r in reports)
        for stage in ("design", "code", "build", "verify", "profile"):
            self.assertIn(stage, stages)
        end = self.progress(token, "end")
        self.assertIn("verified", end["message"])
        shown = self.c.wait_for(lambda m: m.get("method") == "window/showDocument", 10, "showDocument")
        self.assertEqual(shown["params"]["uri"], path_uri(done["paths"]["kernel"]))
        diags = self.c.notification("textDocument/publishDiagnostics",
                                    lambda p: p["uri"] == uri, 10)["params"]["diagnostics"]
        # a kernel measured slower than PyTorch (a loaded machine) is a Warning, never "done"
        if done["slowerThanReference"]:
            self.assertEqual([d["code"] for d in diags], ["slower-than-reference"], diags)
            self.assertEqual(diags[0]["severity"], 2)
        else:
            self.assertEqual(diags, [])
        self.assertEqual(done["slowerThanReference"], done["speedup"] < 1.0)
        with open(path, encoding="utf-8") as f:
            line = [i for i, l in enumerate(f) if "class Model" in l][0]
        hover = self.c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                      "position": {"line": line, "character": 7}})
        text = hover["result"]["contents"]["value"]
        self.assertIn("%.2fx" % done["speedup"], text)
        self.assertIn("pass", text)
        lenses = self.c.request("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
        titles = [l["command"]["title"] for l in lenses]
        self.assertIn("cpu/cpp %.2fx, verified 5/5" % done["speedup"], titles)
        hints = self.c.request("textDocument/inlayHint", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}}})
        self.assertIn(": [256, 1024] float32", [x["label"] for x in hints["result"]])

        # Verify the kernel that run wrote (the last run's model_new.py).
        result = self.run_command("akg.verify", {"uri": uri})
        done = self.finished(result["jobId"])
        self.assertEqual(done["status"], "pass", done)

    def test_design_sketch_only(self):
        path = self.copy_ref("softmax.py")
        uri = path_uri(path)
        result = self.run_command("akg.designSketch", {"uri": uri})
        sketch = self.c.notification("akg/sketchReady", lambda p: p["id"] == result["jobId"],
                                     JOB_TIMEOUT)["params"]
        shown = self.c.wait_for(lambda m: m.get("method") == "window/showDocument", JOB_TIMEOUT,
                                "showDocument of the sketch")
        self.assertEqual(shown["params"]["uri"], path_uri(sketch["path"]))
        self.assertTrue(shown["params"]["takeFocus"])
        done = self.finished(result["jobId"])
        self.assertEqual(done["status"], "unverified", done)
        self.assertTrue(os.path.isfile(done["paths"]["sketch"]))


class Failures(JobCase):
    def job_diagnostics(self, name):
        path = self.copy_ref(name)
        uri = self.c.open(path)
        self.c.notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
        result = self.run_command("akg.generate", {"uri": uri, "backend": "cpu", "dsl": "cpp"})
        done = self.finished(result["jobId"])
        diags = self.c.notification("textDocument/publishDiagnostics",
                                    lambda p: p["uri"] == uri, 10)["params"]["diagnostics"]
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        return done, diags, lines

    def test_unsupported_op_at_its_call(self):
        done, diags, lines = self.job_diagnostics("unsupported_op.py")
        self.assertEqual(done["status"], "error")
        self.assertEqual(done["error"]["class"], "unsupported")
        d = [x for x in diags if x["code"] == "unsupported-op"]
        self.assertEqual(len(d), 1, diags)
        row = [i for i, l in enumerate(lines) if "torch.fft.fft" in l][0]
        self.assertEqual(d[0]["range"]["start"], {"line": row, "character": lines[row].index("torch.fft")})
        self.assertIn("torch.fft.fft", d[0]["message"])

    def test_probe_failure_in_get_inputs(self):
        done, diags, lines = self.job_diagnostics("raises_in_get_inputs.py")
        self.assertEqual(done["status"], "error")
        d = [x for x in diags if x["code"] == "probe-failed"]
        self.assertEqual(len(d), 1, diags)
        self.assertIn("get_inputs", d[0]["message"])
        start = [i for i, l in enumerate(lines) if l.startswith("def get_inputs")][0]
        end = start + 1
        while end < len(lines) and (lines[end].startswith(" ") or not lines[end]):
            end += 1
        self.assertTrue(start <= d[0]["range"]["start"]["line"] < end, d[0])


class AutoProbe(JobCase):
    def test_off_by_default_and_on_when_asked(self):
        path = self.copy_ref("sigmoid.py")
        uri = self.c.open(path)
        self.c.notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
        time.sleep(0.5)
        self.assertFalse([m for m in self.c.server_requests
                          if m["method"] == "window/workDoneProgress/create"])
        self.c.notify("workspace/didChangeConfiguration", {"settings": {"akg": {"autoProbe": True}}})
        path = self.copy_ref("tanh.py")
        uri = self.c.open(path)
        sketch = self.c.notification("akg/sketchReady", lambda p: p["uri"] == uri, JOB_TIMEOUT)["params"]
        done = self.finished(sketch["id"])
        self.assertEqual(done["status"], "unverified")


class Cancel(JobCase):
    def test_cancel_stops_children_within_a_second(self):
        path = self.copy_ref("hangs_in_forward.py")
        uri = path_uri(path)
        result = self.run_command("akg.generate", {"uri": uri, "backend": "cpu", "dsl": "cpp"})
        job_id = result["jobId"]
        token = self.c.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create", 10,
                                "create")["params"]["token"]
        # Wait until the probe runs (it never returns), then cancel.
        self.c.notification("$/progress", lambda p: p["token"] == token and
                            "probe" in p["value"].get("message", ""), JOB_TIMEOUT)
        wait_worker_hung(self.c.proc.pid)
        before = descendants(self.c.proc.pid)
        self.assertTrue(before, "the probe runs in a child process")
        t0 = time.monotonic()
        self.c.notify("window/workDoneProgress/cancel", {"token": token})
        done = self.finished(job_id, timeout=5)
        self.assertEqual(done["status"], "cancelled")
        self.assertLess(time.monotonic() - t0, 1.5)
        deadline = t0 + 1.0
        while [p for p in before if alive(p)] and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([p for p in before if alive(p)], [])
        self.assertEqual(self.progress(token, "end", timeout=5)["kind"], "end")
        # The server is still fine, and akg.cancel with nothing running says so.
        r = self.c.request("workspace/executeCommand", {"command": "akg.cancel", "arguments": [{}]})
        self.assertEqual(r["result"], {"cancelled": 0})

    def test_akg_cancel_command(self):
        path = self.copy_ref("hangs_in_forward.py")
        result = self.run_command("akg.generate", {"uri": path_uri(path), "backend": "cpu", "dsl": "cpp"})
        self.c.notification("$/progress", lambda p: "probe" in p["value"].get("message", ""), JOB_TIMEOUT)
        r = self.run_command("akg.cancel", {"jobId": result["jobId"]})
        self.assertEqual(r, {"cancelled": 1})
        self.assertEqual(self.finished(result["jobId"], timeout=5)["status"], "cancelled")


class ExitWhileRunning(JobCase):
    """`exit` with a job in flight and the client's end of stdin still open:
    the process leaves at once, the job is cancelled, its harness worker and
    everything below it are gone, and the store has the run as cancelled."""

    def start_hanging_job(self):
        path = self.copy_ref("hangs_in_forward.py")
        result = self.run_command("akg.generate", {"uri": path_uri(path), "backend": "cpu",
                                                   "dsl": "cpp"})
        self.c.notification("$/progress", lambda p: "probe" in p["value"].get("message", ""),
                            JOB_TIMEOUT)
        wait_worker_hung(self.c.proc.pid)
        below = descendants(self.c.proc.pid)
        self.assertTrue(below, "the probe runs in a child process")
        return result["jobId"], below

    def exit_and_check(self, job_id, below, want_code):
        t0 = time.monotonic()
        self.c.notify("exit")
        self.assertEqual(self.c.wait_exit(timeout=10), want_code)
        self.assertLess(time.monotonic() - t0, 2.0)
        self.assertFalse(self.c.proc.stdin.closed)
        deadline = time.monotonic() + 1.0
        while [p for p in below if alive(p)] and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([(p, cmdline(p)) for p in below if alive(p)], [])
        db = sqlite3.connect(os.path.join(self.tmp.name, "store.db"))
        try:
            status = db.execute("SELECT status FROM runs WHERE id = ?", (job_id,)).fetchone()
        finally:
            db.close()
        self.assertEqual(status, ("cancelled",))

    def test_shutdown_then_exit(self):
        job_id, below = self.start_hanging_job()
        self.assertIsNone(self.c.request("shutdown", timeout=5)["result"])
        # shutdown cancels the job, and the client still hears how it ended.
        self.assertEqual(self.finished(job_id, timeout=5)["status"], "cancelled")
        self.exit_and_check(job_id, below, 0)

    def test_exit_without_shutdown(self):
        job_id, below = self.start_hanging_job()
        self.exit_and_check(job_id, below, 1)


SKETCHES = os.path.normpath(os.path.join(HERE, "..", "fixtures", "sketches"))


class FromSketch(JobCase):
    """"Generate from this sketch": the user's sketch is the design, with progress and
    cancellation like the other jobs; an error of the design is a diagnostic of the sketch."""

    def copy_sketch(self, name, reference="relu.py"):
        """The fixture in ws/sketches/, its reference in ws/refs/ (the fixture's own link)."""
        os.makedirs(os.path.join(self.ws, "refs"), exist_ok=True)
        os.makedirs(os.path.join(self.ws, "sketches"), exist_ok=True)
        shutil.copy(os.path.join(REFS, reference), os.path.join(self.ws, "refs", reference))
        with open(os.path.join(SKETCHES, name), encoding="utf-8") as f:
            text = f.read()
        text = text.replace("../refs/relu.py", "../refs/" + reference, 1)
        dst = os.path.join(self.ws, "sketches", name)
        with open(dst, "w", encoding="utf-8") as f:
            f.write(text)
        return dst

    def generate(self, name, reference="relu.py"):
        path = self.copy_sketch(name, reference)
        uri = self.c.open(path, language="sketch")
        live = self.c.notification("textDocument/publishDiagnostics",
                                   lambda p: p["uri"] == uri)["params"]["diagnostics"]
        actions = self.c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []}})["result"]
        action = [a for a in actions if a["command"]["command"] == "akg.generateFromSketch"]
        self.assertEqual(len(action), 1, actions)
        self.assertEqual(action[0]["title"], "akg: Generate from this sketch")
        result = self.run_command("akg.generateFromSketch", action[0]["command"]["arguments"][0])
        return path, uri, live, result["jobId"]

    def sketch_diagnostics(self, uri):
        """The sketch's diagnostics published after its job ended."""
        return self.c.notification("textDocument/publishDiagnostics",
                                   lambda p: p["uri"] == uri, 10)["params"]["diagnostics"]

    def test_good_sketch_passes(self):
        path, uri, live, job_id = self.generate("relu.sketch")
        self.assertEqual(live, [])
        create = self.c.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create", 10,
                                 "workDoneProgress/create")
        token = create["params"]["token"]
        begin = self.progress(token, "begin")
        self.assertTrue(begin["cancellable"])
        self.assertIn("from sketch", begin["title"])
        done = self.finished(job_id)
        self.assertEqual(done["status"], "pass", done)
        self.assertEqual(done["sketchUri"], uri)
        self.assertEqual(done["uri"], path_uri(os.path.join(self.ws, "refs", "relu.py")))
        with open(done["paths"]["sketch"], encoding="utf-8") as f, open(path, encoding="utf-8") as g:
            self.assertEqual(f.read(), g.read())
        self.assertEqual(self.sketch_diagnostics(uri), [])
        end = self.progress(token, "end")
        self.assertIn("verified", end["message"])

    def test_wrong_design_is_a_diagnostic_of_the_sketch(self):
        path, uri, live, job_id = self.generate("relu_wrong.sketch")
        self.assertEqual(live, [])
        done = self.finished(job_id)
        self.assertEqual(done["status"], "fail", done)
        self.assertEqual(done["error"]["class"], "design_error")
        diags = self.sketch_diagnostics(uri)
        d = [x for x in diags if x.get("code") == "design_error"]
        self.assertEqual(len(d), 1, diags)
        with open(path, encoding="utf-8") as f:
            row = [i for i, l in enumerate(f) if l.startswith("sketch relu")][0]
        self.assertEqual(d[0]["range"]["start"], {"line": row, "character": 0})
        self.assertEqual(d[0]["severity"], 1)
        self.assertIn("the design computes another function", d[0]["message"])  # the design check
        # an edit makes the run's verdict stale: it is no longer shown
        with open(path, encoding="utf-8") as f:
            fixed = f.read().replace("abs(t0)", "relu(t0)")
        self.c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": fixed}]})
        diags = self.c.notification("textDocument/publishDiagnostics",
                                    lambda p: p["uri"] == uri and p.get("version") == 2,
                                    10)["params"]["diagnostics"]
        self.assertEqual(diags, [])

    def test_unbound_sketch(self):
        path, uri, live, job_id = self.generate("relu_unbound.sketch")
        self.assertEqual(live, [])  # without bind: it is a well-formed sketch
        done = self.finished(job_id)
        self.assertEqual(done["status"], "error", done)
        self.assertEqual(done["error"]["class"], "design_error")
        diags = self.sketch_diagnostics(uri)
        self.assertEqual(len(diags), 1, diags)
        self.assertIn("no bind: section", diags[0]["message"])
        self.assertEqual(diags[0]["range"]["start"]["line"], 2)  # `sketch relu {`

    def test_sketch_that_does_not_check(self):
        path, uri, live, job_id = self.generate("relu_undefined.sketch")
        self.assertTrue([d for d in live if "t9" in d["message"]], live)
        done = self.finished(job_id)
        self.assertEqual(done["status"], "error", done)
        self.assertEqual(done["error"]["class"], "design_error")
        self.assertIn("undefined name 't9'", done["error"]["detail"])
        # the job's error is where the checker's is: said once
        diags = self.sketch_diagnostics(uri)
        self.assertEqual(len(diags), len(live), diags)

    def test_cancel(self):
        path, uri, live, job_id = self.generate("relu.sketch", reference="hangs_in_forward.py")
        token = self.c.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create", 10,
                                "create")["params"]["token"]
        self.c.notification("$/progress", lambda p: p["token"] == token and
                            "probe" in p["value"].get("message", ""), JOB_TIMEOUT)
        wait_worker_hung(self.c.proc.pid)
        actions = self.c.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []}})["result"]
        self.assertIn("akg.cancel", [a["command"]["command"] for a in actions])
        before = descendants(self.c.proc.pid)
        t0 = time.monotonic()
        self.c.notify("window/workDoneProgress/cancel", {"token": token})
        done = self.finished(job_id, timeout=5)
        self.assertEqual(done["status"], "cancelled")
        self.assertLess(time.monotonic() - t0, 1.5)
        deadline = t0 + 1.0
        while [p for p in before if alive(p)] and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([p for p in before if alive(p)], [])


class Hang(JobCase):
    def test_probe_hangs_short_timeout(self):
        self.c.notify("workspace/didChangeConfiguration",
                      {"settings": {"akg": {"targets": ["cpu/cpp"], "verifyTimeout": 3}}})
        path = self.copy_ref("hangs_in_forward.py")
        uri = self.c.open(path)
        self.c.notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
        t0 = time.monotonic()
        result = self.run_command("akg.generate", {"uri": uri, "backend": "cpu", "dsl": "cpp"})
        done = self.finished(result["jobId"], timeout=60)
        self.assertIn(done["status"], ("error", "fail"), done)
        self.assertEqual(done["error"]["class"], "timeout", done)
        self.assertLess(time.monotonic() - t0, 40)
        diags = self.c.notification("textDocument/publishDiagnostics",
                                    lambda p: p["uri"] == uri and p["diagnostics"], 10)["params"]["diagnostics"]
        self.assertTrue([d for d in diags if d["code"] in ("probe-failed", "timeout")], diags)
        # The server answers as before.
        r = self.c.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
        self.assertIn("timeout", r["result"][0]["command"]["title"])


if __name__ == "__main__":
    unittest.main()
