"""End to end: akg_cli designs, lowers, verifies and profiles a kernel for
each small reference of the reduction, norm, scan and loss families (real
harness, real PyTorch, real g++). Run some: AKG_FAMILY_OPS=rms,huber."""
import json
import os
import subprocess
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("AKG_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CLI = os.environ.get("AKG_CLI") or os.path.join(SOURCE, "build", "akg_cli")
PYTHON = os.environ.get("AKG_PYTHON", "/usr/bin/python3")
REFS = os.path.join(HERE, "refs")

# op -> family
OPS = {
    "sum_keepdim": "reduction", "argmin_last": "reduction", "max_values": "reduction",
    "rms": "norm", "layer_norm": "norm", "group_norm": "norm", "batch_norm_eval": "norm",
    "reverse_cumprod": "scan", "masked_exclusive_cumsum": "scan",
    "cross_entropy": "loss", "huber": "loss", "hinge_mean": "loss", "kl_div_edges": "loss",
}
UNTUNED = {"batch_norm_eval", "cross_entropy", "masked_exclusive_cumsum"}
SCALAR_CHAINS = {"masked_exclusive_cumsum"}
SELECTED = [o for o in os.environ.get("AKG_FAMILY_OPS", ",".join(OPS)).split(",") if o]


class FamilyOpsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="akg-families-")
        # two runs at a time: the probe and the compiler overlap the other's timing
        with ThreadPoolExecutor(max_workers=2) as pool:
            cls.results = dict(zip(SELECTED, pool.map(cls.run_op, SELECTED)))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def run_op(cls, name):
        out = os.path.join(cls.tmp.name, name)
        env = dict(os.environ, AKG_STORE=os.path.join(cls.tmp.name, name + ".db"),
                   AKG_PYTHON=PYTHON, AKG_HOME=SOURCE)
        # --min-speedup 0: the first verified design is kept (what is checked is that it
        # verifies, not whether a faster one exists on this machine today), so a brief profile
        # (--profile-runs 5) is enough: nothing here reads its speed
        p = subprocess.run([CLI, "op", "--quiet", "--json", "--output", out, "--min-speedup", "0",
                            "--profile-runs", "5", os.path.join(REFS, name + ".py")],
                           cwd=cls.tmp.name, env=env, capture_output=True, text=True, timeout=300)
        report = None
        if os.path.exists(os.path.join(out, "report.json")):
            with open(os.path.join(out, "report.json")) as f:
                report = json.load(f)
        return p, report, out

    def check(self, name):
        p, report, out = self.results[name]
        self.assertIsNotNone(report, p.stderr[-2000:])
        self.assertEqual(report["status"], "pass", json.dumps(report.get("error"))[:2000])
        self.assertEqual(p.returncode, 0)
        # the first design passes (a libm retry would hide a wrong fast exp or log)
        self.assertEqual(len(report["candidates"]), 1)
        self.assertEqual(report["correctness"]["trials"], 5)
        self.assertGreater(report["perf"]["kernel_ms"], 0)
        with open(os.path.join(out, "sketch.sketch")) as f:
            sketch = f.read()
        # a real design: parallel rows, vectorised computation, tunables (an inference
        # batch norm is one affine pass per plane, a row loss one task per row and a scan of
        # contiguous rows four running values per task: nothing in them to tune; those four
        # running values are scalar chains, nothing in them to vectorise)
        self.assertIn('@llm_hint("parallel", "coreidx")', sketch)
        if name not in SCALAR_CHAINS:
            self.assertIn('@llm_hint("vectorize", "simd"', sketch)
        if name not in UNTUNED:
            self.assertIn("tune(", sketch)
        # the sketch is the design: bound to the task, lowered from the sketch alone
        self.assertIn("bind: ", sketch)
        with open(os.path.join(out, "kernel.cpp")) as f:
            kernel = f.read()
        self.assertIn('extern "C" int akg_kernel(', kernel)
        self.assertIn("#pragma omp parallel", kernel)
        # sizes are run-time arguments: no shape of the reference is baked in
        self.assertIn("akg_symbols[0]", kernel)
        with open(os.path.join(out, "model_new.py")) as f:
            model_new = f.read()
        self.assertIn("class ModelNew(nn.Module)", model_new)


def _make(name):
    return lambda self: self.check(name)


for _op in SELECTED:
    setattr(FamilyOpsTest, "test_" + _op, _make(_op))

if __name__ == "__main__":
    unittest.main()
