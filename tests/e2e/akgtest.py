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


def cut_reference(family, name, sizes, replace, folder):
    """bench/ops/FAMILY/NAME.py with its module-level sizes replaced (the interpreter is slow), no
    dynamic shapes, and the (old, new) texts of replace swapped, written as FOLDER/NAME.py; returns
    its path."""
    with open(os.path.join(SOURCE, "bench", "ops", family, name + ".py")) as f:
        text = f.read()
    for key, value in sizes.items():
        text, n = re.subn(r"(?m)^%s = \d+$" % key, "%s = %d" % (key, value), text)
        if n != 1:
            raise AssertionError("%s.py has no line %s = ..." % (name, key))
    for old, new in replace:
        if old not in text:
            raise AssertionError("%s.py has no text %r" % (name, old))
        text = text.replace(old, new)
    text = re.sub(r"(?ms)^def get_inputs_dyn_list\(\):.*?(?=^\S|\Z)", "", text)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    return path


@unittest.skipUnless(os.access(VENV_TORCH2, os.X_OK),
                     "skipped: PyTorch 2 and Triton are not installed (scripts/setup.sh torch2)")
class InterpretedGpuTest(CliTest):
    """A CliTest for cuda designs without a GPU: Triton's interpreter on the CPU (PyTorch 2 from
    .venv-torch2), references of the suite cut to small shapes, CUDA C lowered and compiled.

    DESIGNS names the class's designs, {NAME: (FAMILY, sizes, replace)}: bench/ops/FAMILY/NAME.py
    cut to sizes (and the (old, new) texts of replace swapped). setUpClass designs them all for
    cuda/triton_cuda and verifies them under the interpreter in one `akg_cli bench` run: one
    harness worker, PyTorch and Triton imported once, serves every design, where an `akg_cli op`
    each started and stopped a worker each. The design is not first run by the reference
    interpreter (--design-check off): the kernel's verification checks it, and the reference
    interpreter's runs of the Designer's sketches are the sketch difftest suites'. gpu_design(NAME)
    checks that run's report and sketch."""

    DESIGNS = {}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.designs_tmp = tempfile.TemporaryDirectory(prefix="akg-e2e-gpu-")
        work = cls.designs_tmp.name
        cls.designs_dir = os.path.join(work, "runs")
        cls.designs_run = None
        if not cls.DESIGNS:
            return
        suite = os.path.join(work, "suite")
        for name, (family, sizes, replace) in cls.DESIGNS.items():
            cut_reference(family, name, sizes, replace, os.path.join(suite, family))
        env = dict(os.environ, AKG_STORE=os.path.join(work, "akg.db"), AKG_HOME=SOURCE,
                   AKG_PYTHON=VENV_TORCH2, AKG_TRITON_INTERPRET="1")
        cls.designs_run = subprocess.run(
            [CLI, "bench", "--suite", suite, "--backend", "cuda", "--dsl", "triton_cuda", "--scale", "1",
             "--design-check", "off", "--trials", "2", "--profile-runs", "1", "--min-speedup", "0",
             "--runs-dir", cls.designs_dir,
             "--output", os.path.join(work, "bench.json"), "--quiet"],
            cwd=work, env=env, capture_output=True, text=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.designs_tmp.cleanup()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.env.update(AKG_TRITON_INTERPRET="1", AKG_PYTHON=VENV_TORCH2)

    def gpu_design(self, name, marker="on a GPU"):
        """DESIGNS' NAME as setUpClass's run designed it for cuda/triton_cuda and verified it
        under Triton's interpreter: checks that it passed, and returns the sketch, checked to be a
        GPU design (its header says marker; on the grid, no CPU cores)."""
        self.assertIn(name, self.DESIGNS)
        run = self.designs_run
        folder = os.path.join(self.designs_dir, "%s_%s" % (self.DESIGNS[name][0], name))
        path = os.path.join(folder, "report.json")
        self.assertTrue(os.path.isfile(path), "akg_cli bench (exit %d) wrote no report of %s: %s"
                        % (run.returncode, name, (run.stdout[-1000:] + run.stderr[-2000:])))
        with open(path) as f:
            report = json.load(f)
        self.assertEqual(report["status"], "pass", report.get("error"))
        self.assertEqual(report["verdict"], "interpreted")
        with open(os.path.join(folder, "sketch.sketch")) as f:
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
