"""The cuda/triton_cuda target end to end without a GPU: akg_cli designs, lowers the sketch to
Triton, and the harness verifies the kernel in its sandboxed child under Triton's interpreter on
the CPU (AKG_TRITON_INTERPRET=1, PyTorch 2 and Triton from .venv-torch2). The report says the
kernel was interpreted and claims no speed; a wrong arch for the target is refused up front."""
import os
import unittest

from akgtest import REFS, SOURCE, CliTest

VENV_PYTHON = os.path.join(SOURCE, ".venv-torch2", "bin", "python")


@unittest.skipUnless(os.access(VENV_PYTHON, os.X_OK),
                     "skipped: PyTorch 2 and Triton are not installed (scripts/setup.sh torch2)")
class TritonInterpretTest(CliTest):
    def setUp(self):
        super().setUp()
        self.env.update(AKG_TRITON_INTERPRET="1", AKG_PYTHON=VENV_PYTHON)

    def test_relu_verified_under_the_interpreter(self):
        p, report = self.op(os.path.join(REFS, "relu.py"), "--backend", "cuda", "--dsl",
                            "triton_cuda", "--trials", "2", name="relu", timeout=600)
        self.assertIsNotNone(report, p.stderr[-2000:])
        self.assertEqual(report["status"], "pass", report.get("error"))
        self.assertEqual((report["backend"], report["dsl"], report["arch"]),
                         ("cuda", "triton_cuda", "sm_90"))
        self.assertEqual(report["verdict"], "interpreted")
        self.assertIn("not the GPU's", report["verdict_detail"])
        self.assertEqual(report["perf"]["env"]["triton_interpret"], "cuda:0")
        self.assertNotIn("slower_than_reference", report["perf"])
        # the first verified kernel ends the job: interpreted times are no reason to redesign
        self.assertEqual([c["status"] for c in report["candidates"]], ["pass"])
        kernel = report["paths"]["kernel"]
        with open(kernel) as f:
            source = f.read()
        self.assertIn("@triton.jit", source)
        self.assertIn("def akg_kernel(tensors, symbols, params)", source)

    def test_cpu_arch_for_cuda_refused(self):
        p, report = self.op(os.path.join(REFS, "relu.py"), "--backend", "cuda", "--dsl",
                            "triton_cuda", "--arch", "x86_64", name="arch")
        self.assertEqual(p.returncode, 2)
        self.assertIsNone(report)
        self.assertIn("arch 'x86_64' is not an NVIDIA architecture", p.stderr)
        self.assertIn("sm_90a", p.stderr)


if __name__ == "__main__":
    unittest.main()
