"""The built-in Designer's GPU design of scans for cuda (engine/providers/builtin/
rx_sketch_gpu_scan.c): D streamed with a vector of f64 running values, RB rows per program for
contiguous rows and CH columns of an outer row per program for strided ones. Two operators of
the suite (bench/ops/scan), cut to small shapes, are designed for cuda/triton_cuda and verified
under Triton's interpreter: cumsum (the contiguous rows) and cumsum_dim0 (the strided columns).
Their sketches also lower to CUDA C (cumsum's compiled by nvcc where one is installed)."""
import glob
import os
import re
import subprocess
import unittest

from akgtest import CLI, SOURCE, CliTest

VENV_PYTHON = os.path.join(SOURCE, ".venv-torch2", "bin", "python")
SCANS = os.path.join(SOURCE, "bench", "ops", "scan")


def nvcc_path():
    found = os.environ.get("AKG_NVCC") or ""
    for c in sorted(glob.glob(os.path.join(SOURCE, ".venv-nvcc", "lib", "python3*", "site-packages",
                                           "nvidia", "cu*", "bin", "nvcc"))):
        found = found or c
    return found if found and os.access(found, os.X_OK) else None


@unittest.skipUnless(os.access(VENV_PYTHON, os.X_OK),
                     "skipped: PyTorch 2 and Triton are not installed (scripts/setup.sh torch2)")
class GpuScanTest(CliTest):
    def setUp(self):
        super().setUp()
        self.env.update(AKG_TRITON_INTERPRET="1", AKG_PYTHON=VENV_PYTHON)

    def small_ref(self, name, sizes):
        """bench/ops/scan/NAME.py with its module-level sizes replaced (the interpreter is
        slow) and no dynamic shapes."""
        with open(os.path.join(SCANS, name + ".py")) as f:
            text = f.read()
        for key, value in sizes.items():
            text, n = re.subn(r"(?m)^%s = \d+$" % key, "%s = %d" % (key, value), text)
            self.assertEqual(n, 1, "%s.py has no line %s = ..." % (name, key))
        text = re.sub(r"(?ms)^def get_inputs_dyn_list\(\):.*?(?=^\S|\Z)", "", text)
        path = os.path.join(self.dir, name + ".py")
        with open(path, "w") as f:
            f.write(text)
        return path

    def design_and_verify(self, name, sizes):
        p, report = self.op(self.small_ref(name, sizes), "--backend", "cuda", "--dsl",
                            "triton_cuda", "--trials", "2", name=name, timeout=300)
        self.assertIsNotNone(report, p.stderr[-2000:])
        self.assertEqual(report["status"], "pass", report.get("error"))
        self.assertEqual(report["verdict"], "interpreted")
        with open(os.path.join(self.dir, name, "sketch.sketch")) as f:
            return f.read()

    def lowers_to_cuda_c(self, name, sketch, compile_it):
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
        c = subprocess.run([nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                            "-arch=sm_90", "-o", cu[:-3] + ".so", cu], capture_output=True,
                           text=True, timeout=240)
        self.assertEqual(c.returncode, 0, c.stdout[-2000:] + c.stderr[-2000:])

    def test_contiguous_rows(self):
        sketch = self.design_and_verify("cumsum", {"BATCH": 9, "LENGTH": 40})
        # the GPU's design: rows as a vector of running values, not four scalar rows per task
        self.assertIn("on a GPU", sketch)
        self.assertIn("for o in range(0, O, RB):", sketch)
        self.assertIn("dtype=f64", sketch)
        self.assertIn("grididx", sketch)
        self.assertNotIn("r3 = ", sketch)
        self.lowers_to_cuda_c("cumsum", sketch, True)

    def test_strided_columns(self):
        sketch = self.design_and_verify("cumsum_dim0", {"LENGTH": 24, "COLS": 300})
        self.assertIn("on a GPU", sketch)
        self.assertIn("for c in range(0, I, CH):", sketch)
        self.assertIn("run = alloc([min(CH, I - c)], dtype=f64", sketch)
        self.lowers_to_cuda_c("cumsum_dim0", sketch, False)


if __name__ == "__main__":
    unittest.main()
