"""The built-in Designer designs for the GPU when the target is cuda: elementwise blocks of 1024-4096
elements on the grid, softmax and norm rows in one block, reductions spread over many programs with a
combining launch where rows are few or long, matrix products one program per output tile with a
loop over K (tl.dot). The Designer runs for cuda/triton_cuda on operators of the
suite (bench/ops); the difftest suite (tests/sketch/difftest/suite.py --dsl triton_cuda) runs each
sketch in the reference interpreter and its Triton lowering under Triton's interpreter on small shapes,
once as designed and once with its thresholds lowered so that the streamed and split branches run too.
The CPU target keeps its designs (tasks for a few cores)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

from akgtest import CLI, SOURCE, CliTest

VENV_PYTHON = os.path.join(SOURCE, ".venv-torch2", "bin", "python")
SUITE = os.path.join(SOURCE, "tests", "sketch", "difftest", "suite.py")
# one operator of each family with GPU designs and each kind of branch (designing is what costs:
# a harness worker and a probe each; the other operators' designs run in the difftest suite's
# split variants and sketch_difftest_triton_cuda)
OPS = ["activation/gelu", "activation/softmax", "reduction/sum_all", "reduction/sum_dim0",
       "reduction/argmax_dim0", "loss/mse", "norm/layer_norm", "matmul/batched_bmm", "matmul/transposed_b"]


def tune_first(sketch, name):
    """The design's choice of a tunable: the first candidate of NAME = tune(...)."""
    m = re.search(r"\b%s = tune\((\d+)" % name, sketch)
    return int(m.group(1)) if m else None


@unittest.skipUnless(os.access(VENV_PYTHON, os.X_OK),
                     "skipped: PyTorch 2 and Triton are not installed (scripts/setup.sh torch2)")
class GpuDesignsTest(CliTest):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(prefix="akg-gpu-designs-")
        env = dict(os.environ, AKG_CLI=CLI)
        cls.suite = subprocess.run([VENV_PYTHON, SUITE, "--dsl", "triton_cuda", "--split-variants", "--work",
                                    cls.work.name, "--ops", *OPS], env=env, capture_output=True, text=True,
                                   timeout=1500)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def sketch(self, op):
        path = os.path.join(self.work.name, op.split("/")[1], "sketch.sketch")
        self.assertTrue(os.path.isfile(path), self.suite.stdout[-3000:] + self.suite.stderr[-2000:])
        with open(path) as f:
            text = f.read()
        # every parallel loop is on the grid; nothing is split for a few cores
        self.assertIn('@llm_hint("parallel", "grididx")', text, op)
        self.assertNotIn("coreidx", text, op)
        return text

    def test_suite_verifies_every_design_under_the_interpreter(self):
        out = self.suite.stdout
        self.assertEqual(self.suite.returncode, 0, out[-4000:] + self.suite.stderr[-2000:])
        for op in OPS:
            # elementwise and matmul designs have no thresholds, so no variant
            for name in (op,) if op.startswith(("activation/gelu", "matmul/")) else (op, op + "@split"):
                self.assertRegex(out, r"(?m)^%s\s+pass\b" % re.escape(name))

    def test_elementwise_blocks_on_the_grid(self):
        block = tune_first(self.sketch("activation/gelu"), "BLOCK")
        self.assertTrue(1024 <= block <= 4096, block)
        # the CPU target keeps its design: 16384-element tasks over the cores
        p, report = self.op(os.path.join(SOURCE, "bench", "ops", "activation", "gelu.py"), "--workflow",
                            "design_only", "--design-check", "off", "--python", VENV_PYTHON, name="cpu")
        self.assertIsNotNone(report, p.stderr[-2000:])
        with open(report["paths"]["sketch"]) as f:
            cpu = f.read()
        self.assertIn("coreidx", cpu)
        self.assertEqual(tune_first(cpu, "BLOCK"), 16384)

    def test_softmax_rows_in_one_block(self):
        text = self.sketch("activation/softmax")
        self.assertIn("for o in range(0, O, RB):", text)
        # one write of the output: the exponentials are not stored and read back
        self.assertNotIn("load(y[", text)

    def test_reductions_over_many_programs(self):
        for op in ("reduction/sum_all", "loss/mse"):
            # one long row: P programs write partials, a second launch combines them
            text = self.sketch(op)
            self.assertIn("designed for a GPU", text, op)
            self.assertIn('part0 = alloc([O, P], dtype=f32, llm_hint=["slow"])', text, op)
            self.assertGreaterEqual(tune_first(text, "P"), 64, op)
        # strided with few column groups: the rows are cut into parts as well
        text = self.sketch("reduction/sum_dim0")
        self.assertIn('part0 = alloc([O, P, I], dtype=f32, llm_hint=["slow"])', text)
        for op in ("reduction/argmax_dim0", "norm/layer_norm"):
            self.assertIn("designed for a GPU", self.sketch(op), op)

    def test_matmul_output_tiles_on_the_grid(self):
        text = self.sketch("matmul/transposed_b")
        # a grid over BM x BN tiles of C, a loop over K, B read as stored and transposed by gemm
        self.assertIn("for i in range(0, M, BM):", text)
        self.assertIn("for j in range(0, N, BN):", text)
        self.assertIn("for k in range(0, K, BK):", text)
        self.assertIn("acc = gemm(ta, tb, acc, trans_b=True)", text)
        for name in ("BM", "BN"):
            self.assertGreaterEqual(tune_first(text, name), 64, name)
        self.assertGreaterEqual(tune_first(text, "BK"), 16)
        # the batch is a grid axis around the tiles
        text = self.sketch("matmul/batched_bmm")
        self.assertRegex(text, r'@llm_hint\("parallel", "grididx"\)\n  for z in range\(0, Z\):')
        self.assertIn("store(acc -> c[z, i:i+BM, j:j+BN])", text)


if __name__ == "__main__":
    unittest.main()
