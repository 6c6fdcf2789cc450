"""The built-in Designer's GPU design of convolutions for cuda (engine/providers/builtin/
designer_gpu_conv.c): an implicit GEMM, one program per BW output columns of a row x BN output
channels of a group, K walked as BK input channels per tap with `gemm` into an f32 tile, zero
padding as the loads' bounds guards. Two operators of the suite (bench/ops/conv), cut to small
shapes, are designed for cuda/triton_cuda and verified under Triton's interpreter: conv2d_standard
(padding 1, a bias) and grouped_conv2d made strided and dilated (4 groups, stride 2, dilation 2).
Their sketches also lower to CUDA C, compiled by nvcc where one is installed."""
import glob
import os
import re
import subprocess
import unittest

from akgtest import SOURCE, CliTest

VENV_PYTHON = os.path.join(SOURCE, ".venv-torch2", "bin", "python")
CONVS = os.path.join(SOURCE, "bench", "ops", "conv")


def nvcc_path():
    found = os.environ.get("AKG_NVCC") or ""
    for c in sorted(glob.glob(os.path.join(SOURCE, ".venv-nvcc", "lib", "python3*", "site-packages",
                                           "nvidia", "cu*", "bin", "nvcc"))):
        found = found or c
    return found if found and os.access(found, os.X_OK) else None


@unittest.skipUnless(os.access(VENV_PYTHON, os.X_OK),
                     "skipped: PyTorch 2 and Triton are not installed (scripts/setup.sh torch2)")
class GpuConvTest(CliTest):
    def setUp(self):
        super().setUp()
        self.env.update(AKG_TRITON_INTERPRET="1", AKG_PYTHON=VENV_PYTHON)

    def small_ref(self, name, sizes, replace=()):
        """bench/ops/conv/NAME.py with its module-level sizes replaced (the interpreter is
        slow), no dynamic shapes, and the (old, new) texts of replace swapped."""
        with open(os.path.join(CONVS, name + ".py")) as f:
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

    def design_and_verify(self, name, sizes, replace=()):
        p, report = self.op(self.small_ref(name, sizes, replace), "--backend", "cuda", "--dsl",
                            "triton_cuda", "--trials", "2", "--profile-runs", "1",
                            "--min-speedup", "0", name=name, timeout=300)
        self.assertIsNotNone(report, p.stderr[-2000:])
        self.assertEqual(report["status"], "pass", report.get("error"))
        self.assertEqual(report["verdict"], "interpreted")
        with open(os.path.join(self.dir, name, "sketch.sketch")) as f:
            sketch = f.read()
        # the GPU's design: an implicit GEMM over a grid of output tiles, not packed panels
        self.assertIn("on a GPU", sketch)
        self.assertIn("acc = gemm(tw, tx, acc)", sketch)
        self.assertIn("grididx", sketch)
        self.assertNotIn("coreidx", sketch)
        return sketch

    def lowers_to_cuda_c(self, name, sketch):
        path = os.path.join(self.dir, name + "_gpu.sketch")
        with open(path, "w") as f:
            f.write(sketch)
        p = self.akg("sketch", "emit", "--backend", "cuda", "--dsl", "cuda", path)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        self.assertIn("__global__", p.stdout)
        nvcc = nvcc_path()
        if not nvcc:
            return
        cu = os.path.join(self.dir, name + ".cu")
        with open(cu, "w") as f:
            f.write(p.stdout)
        c = subprocess.run([nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
                            "-arch=sm_90", "-o", cu[:-3] + ".so", cu], capture_output=True,
                           text=True, timeout=240)
        self.assertEqual(c.returncode, 0, c.stdout[-2000:] + c.stderr[-2000:])

    def test_standard(self):
        sketch = self.design_and_verify(
            "conv2d_standard", {"BATCH": 2, "IN_CHANNELS": 5, "OUT_CHANNELS": 20, "HEIGHT": 7,
                                "WIDTH": 9})
        self.assertIn("bias = weight(\"conv2d.bias\", [OC])", sketch)
        self.lowers_to_cuda_c("conv2d_standard", sketch)

    def test_grouped_strided_dilated(self):
        sketch = self.design_and_verify(
            "grouped_conv2d", {"BATCH": 1, "IN_CHANNELS": 8, "OUT_CHANNELS": 12, "GROUPS": 2,
                               "HEIGHT": 9, "WIDTH": 11},
            replace=[("KERNEL_SIZE, 1, 1, 1, GROUPS, True", "KERNEL_SIZE, 2, 2, 2, GROUPS, True")])
        self.assertIn("G = 2", sketch)
        self.assertIn(":2] -> tx)", sketch)  # the strided columns, a literal step
        self.lowers_to_cuda_c("grouped_conv2d", sketch)


if __name__ == "__main__":
    unittest.main()
