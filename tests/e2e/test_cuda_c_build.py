"""The cuda/cuda target's build gets the task's architecture: `akg_cli op --arch sm_90a` (the H200's
arch-specific target) lowers relu to CUDA C and runs nvcc with -arch=sm_90a, the arch travelling
from the task through the build request (akg/backend.h) to the backend's build_argv. Nothing runs
on a GPU: the workflow is kernelgen_only and the probe runs on the CPU (AKG_TRITON_INTERPRET=1
makes the cuda worker a CPU one, PyTorch 2 from .venv-torch2). Where nvcc is found (PATH, or
.venv-nvcc from scripts/setup.sh test) the library is built and the report is unverified; without
one the build cannot start and the test checks the command alone."""
import glob
import os
import shutil
import unittest

from akgtest import REFS, SOURCE, CliTest

VENV_PYTHON = os.path.join(SOURCE, ".venv-torch2", "bin", "python")


def find_nvcc():
    found = shutil.which("nvcc")
    if found:
        return found
    venv = glob.glob(os.path.join(SOURCE, ".venv-nvcc", "lib", "python3*", "site-packages",
                                  "nvidia", "cu*", "bin", "nvcc"))
    return venv[-1] if venv and os.access(venv[-1], os.X_OK) else None


@unittest.skipUnless(os.access(VENV_PYTHON, os.X_OK),
                     "skipped: the probe needs PyTorch 2 on the CPU (scripts/setup.sh torch2)")
class CudaBuildArchTest(CliTest):
    def setUp(self):
        super().setUp()
        self.env.update(AKG_TRITON_INTERPRET="1", AKG_PYTHON=VENV_PYTHON)
        self.nvcc = find_nvcc()
        if self.nvcc:
            self.env["PATH"] = os.path.dirname(self.nvcc) + os.pathsep + self.env["PATH"]

    def build_line(self, stderr):
        lines = [l for l in stderr.splitlines() if "build " in l and "nvcc" in l]
        self.assertTrue(lines, stderr[-2000:])
        return lines[0]

    def run_arch(self, *arch):
        p, report = self.op(os.path.join(REFS, "relu.py"), "--backend", "cuda", "--dsl", "cuda",
                            *arch, "--workflow", "kernelgen_only", name="relu", timeout=600)
        self.assertIsNotNone(report, p.stderr[-2000:])
        return p, report

    def test_task_arch_reaches_nvcc(self):
        p, report = self.run_arch("--arch", "sm_90a")
        self.assertEqual(report["arch"], "sm_90a")
        self.assertIn(" -arch=sm_90a ", self.build_line(p.stderr))
        if not self.nvcc:
            print("nvcc not found: the build command is checked, nothing is compiled")
            self.assertEqual(report["error"]["class"], "build_error")
            return
        self.assertEqual(report["status"], "unverified", report.get("error"))
        run = os.path.dirname(report["paths"]["kernel"])
        self.assertTrue(glob.glob(os.path.join(run, "kernel_*.so")), os.listdir(run))

    def test_default_arch(self):
        p, report = self.run_arch()
        self.assertEqual(report["arch"], "sm_90")
        self.assertIn(" -arch=sm_90 ", self.build_line(p.stderr))


if __name__ == "__main__":
    unittest.main()
