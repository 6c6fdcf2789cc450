"""Helpers for the end-to-end tests: run the real akg_cli on real references."""
import glob
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import unittest

SOURCE = os.environ.get("AKG_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli")
PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")
REFS = os.path.join(SOURCE, "tests", "fixtures", "refs")
KERNELS = os.path.join(SOURCE, "tests", "fixtures", "kernels")


class CliTest(unittest.TestCase):
    """Each test gets its own store and output folder."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="akg-e2e-")
        self.dir = self.tmp.name
        self.env = dict(os.environ, AKG_STORE=os.path.join(self.dir, "akg.db"),
                        AKG_PYTHON=PYTHON, AKG_HOME=SOURCE)

    def tearDown(self):
        self.tmp.cleanup()

    def akg(self, *args, timeout=300):
        return subprocess.run([CLI, *args], cwd=self.dir, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def op(self, ref, *extra, name="run", timeout=300):
        """Runs `akg_cli op --json` and returns (process, report)."""
        out = os.path.join(self.dir, name)
        p = self.akg("op", "--json", "--output", out, *extra, ref, timeout=timeout)
        report = None
        path = os.path.join(out, "report.json")
        if os.path.exists(path):
            with open(path) as f:
                report = json.load(f)
        return p, report


VENV_TORCH2 = os.path.join(SOURCE, ".venv-torch2", "bin", "python")


def nvcc_path():
    """nvcc: $AKG_NVCC, else the one scripts/setup.sh installs into .venv-nvcc; None without."""
    found = os.environ.get("AKG_NVCC") or ""
    for c in sorted(glob.glob(os.path.join(SOURCE, ".venv-nvcc", "lib", "python3*", "site-packages",
                                           "nvidia", "cu*", "bin", "nvcc"))):
        found = found or c
    return found if found and os.access(found, os.X_OK) else None


@unittest.skipUnless(os.access(VENV_TORCH2, os.X_OK),
                     "skipped: PyTorch 2 and Triton are not installed (scripts/setup.sh torch2)")
class InterpretedGpuTest(CliTest):
    """A CliTest for cuda designs without a GPU: Triton's interpreter on the CPU (PyTorch 2 from
    .venv-torch2), references of the suite cut to small shapes, CUDA C lowered and compiled."""

    def setUp(self):
        super().setUp()
        self.env.update(AKG_TRITON_INTERPRET="1", AKG_PYTHON=VENV_TORCH2)

    def small_ref(self, family, name, sizes, replace=()):
        """bench/ops/FAMILY/NAME.py with its module-level sizes replaced (the interpreter is
        slow), no dynamic shapes, and the (old, new) texts of replace swapped."""
        with open(os.path.join(SOURCE, "bench", "ops", family, name + ".py")) as f:
            text = f.read()
        for key, value in sizes.items():
            text, n = re.subn(r"(?m)^%s = \d+$" % key, "%s = %d" % (key, value), text)
            self.assertEqual(n, 1, "%s.py has no line %s = ..." % (name, key))
        for old, new in replace:
            self.assertIn(old, text)
            text = text.replace(old, new)
        text = re.sub(r"(?ms)^def get_inputs_dyn_list\(\):.*?(?=^\S|\Z)", "", text)
        path = os.path.join(self.dir, name + ".py")
        with open(path, "w") as f:
            f.write(text)
        return path

    def gpu_design(self, family, name, sizes, replace=(), marker="on a GPU"):
        """bench/ops/FAMILY/NAME.py cut to sizes, designed for cuda/triton_cuda and verified under
        Triton's interpreter; returns the sketch, checked to be a GPU design (its header says
        marker; on the grid, no CPU cores)."""
        p, report = self.op(self.small_ref(family, name, sizes, replace), "--backend", "cuda",
                            "--dsl", "triton_cuda", "--trials", "2", "--profile-runs", "1",
                            "--min-speedup", "0", name=name, timeout=300)
        self.assertIsNotNone(report, p.stderr[-2000:])
        self.assertEqual(report["status"], "pass", report.get("error"))
        self.assertEqual(report["verdict"], "interpreted")
        with open(os.path.join(self.dir, name, "sketch.sketch")) as f:
            sketch = f.read()
        self.assertIn(marker, sketch)
        self.assertIn("grididx", sketch)
        self.assertNotIn("coreidx", sketch)
        return sketch

    def lowers_to_cuda_c(self, name, sketch, compile_it=True):
        """The sketch lowered to CUDA C (`akg_cli sketch emit`) and, where nvcc is found and
        compile_it, built for sm_90 as the cuda backend builds it."""
        path = os.path.join(self.dir, name + "_gpu.sketch")
        with open(path, "w") as f:
            f.write(sketch)
        p = self.akg("sketch", "emit", "--backend", "cuda", "--dsl", "cuda", path)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("__global__", p.stdout)
        nvcc = nvcc_path()
        if not nvcc or not compile_it:
            return
        cu = os.path.join(self.dir, name + ".cu")
        with open(cu, "w") as f:
            f.write(p.stdout)
        c = subprocess.run([nvcc, "-O3", "-std=c++17", "-shared", "-cudart", "shared", "-Xcompiler",
                            "-fPIC", "-arch=sm_90", "-o", cu[:-3] + ".so", cu], capture_output=True,
                           text=True, timeout=240)
        self.assertEqual(c.returncode, 0, c.stdout[-2000:] + c.stderr[-2000:])


class ReplayTest(CliTest):
    """A CliTest with the loopback replay server (tests/providers/replay_server.py) running and
    the environment pointing the openai provider at scenario (a path of the server's, e.g.
    "script-relu") under a tag of its own: self.port, self.key, self.tag."""

    scenario = "script-relu"

    def setUp(self):
        super().setUp()
        self.server = subprocess.Popen(
            [sys.executable, os.path.join(SOURCE, "tests", "providers", "replay_server.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.server.stdout.readline()
        self.assertTrue(line.startswith("PORT "), line)
        self.port = int(line.split()[1])
        self.key = "sk-replay-" + secrets.token_hex(16)
        self.tag = "relu" + secrets.token_hex(4)
        home = os.path.join(self.dir, "home")
        os.makedirs(home)
        # no settings file of the user's: the environment alone points at the server
        self.env.update(HOME=home, AKG_AGENTS_API_KEY=self.key,
                        AKG_AGENTS_MODEL_NAME="replay-coder-7b",
                        AKG_AGENTS_BASE_URL="http://127.0.0.1:%d/%s/%s/v1"
                        % (self.port, self.scenario, self.tag))

    def tearDown(self):
        self.server.stdin.close()
        self.server.wait(timeout=10)
        self.server.stdout.close()
        super().tearDown()


def wait_for_candidates(proc, count, seconds):
    """Reads proc's stderr until count search candidates have finished (their progress lines) or
    seconds pass; returns (finished, the lines read)."""
    lines, finished = [], 0
    deadline = time.time() + seconds
    for line in proc.stderr:
        lines.append(line)
        if re.search(r"search  evolve: candidate \d+/\d+", line):
            finished += 1
            if finished == count:
                break
        if time.time() > deadline:
            break
    return finished, lines
