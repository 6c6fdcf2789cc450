"""Targets whose device is not on this machine, end to end with --workflow kernelgen_only:
akg_cli probes the reference (on the CPU: shapes, dtypes and the op graph do not depend on the
device), designs, checks the design in the reference interpreter, lowers the sketch and writes
sketch.sketch, the kernel and model_new.py; the job ends `unverified` (never `pass`), and the
report says why: the workflow, and the missing runtime. One operator a family: activation
(gelu), reduction (sum over a dim), GEMM (a square matmul; refused by the Triton lowering with
the sketch's line, so that job is an error that names it). Where the runtime exists (an NPU's
/dev/davinci*, a GPU's /dev/nvidia*), the runtime sentence is absent and the harness of the
target's device kind would verify in the default workflow."""
import ast
import glob
import json
import os
import unittest

from akgtest import SOURCE, CliTest

OPS = os.path.join(SOURCE, "bench", "ops")
HAS_NPU = bool(glob.glob("/dev/davinci[0-9]*"))
HAS_GPU = os.path.exists("/dev/nvidiactl")


class KernelgenTargetsTest(CliTest):
    def generate(self, backend, dsl, ref, name):
        p, report = self.op(os.path.join(OPS, ref), "--backend", backend, "--dsl", dsl,
                            "--workflow", "kernelgen_only", name=name, timeout=600)
        self.assertIsNotNone(report, p.stderr[-2000:])
        return p, report

    def check_unverified(self, p, report, backend, dsl, missing):
        self.assertEqual(report["status"], "unverified", report.get("error"))
        self.assertEqual((report["backend"], report["dsl"], report["workflow"]),
                         (backend, dsl, "kernelgen_only"))
        self.assertNotIn("correctness", report)
        self.assertNotIn("perf", report)
        reason = report["unverified_reason"]
        self.assertIn("kernelgen_only workflow ends before verification", reason)
        self.assertIn("not verified:", p.stderr)
        if missing:
            self.assertIn(missing, reason)
        paths = report["paths"]
        for key in ("sketch", "kernel", "model_new", "report"):
            self.assertTrue(os.path.isfile(paths[key]), key)
        with open(paths["kernel"]) as f:
            ast.parse(f.read())
        with open(paths["model_new"]) as f:
            model_new = f.read()
        ast.parse(model_new)
        self.assertIn("class ModelNew(nn.Module)", model_new)
        with open(paths["report"]) as f:
            self.assertEqual(json.load(f)["status"], "unverified")
        return paths

    def test_triton_ascend_activation(self):
        p, report = self.generate("ascend", "triton_ascend", "activation/gelu.py", "gelu")
        paths = self.check_unverified(p, report, "ascend", "triton_ascend",
                                      None if HAS_NPU else "no Ascend NPU runtime (torch_npu)")
        self.assertEqual(report["arch"], "ascend910b")
        with open(paths["kernel"]) as f:
            kernel = f.read()
        self.assertIn("import torch_npu", kernel)
        self.assertIn("tl.num_programs(0)", kernel)
        with open(paths["model_new"]) as f:
            self.assertIn('_AKG_DEVICE = "npu"', f.read())

    def test_triton_ascend_reduction(self):
        p, report = self.generate("ascend", "triton_ascend", "reduction/sum_dim1_keepdim.py",
                                  "sum")
        self.check_unverified(p, report, "ascend", "triton_ascend",
                              None if HAS_NPU else "no Ascend NPU runtime (torch_npu)")

    def test_triton_ascend_gemm_refused_with_its_line(self):
        p, report = self.generate("ascend", "triton_ascend", "matmul/square.py", "matmul")
        self.assertNotEqual(report["status"], "pass")
        self.assertNotEqual(report["status"], "unverified")
        detail = report["error"]["detail"]
        self.assertRegex(detail, r"sketch\.sketch:\d+:\d+: ")

    def test_tilelang_activation(self):
        p, report = self.generate("cuda", "tilelang_cuda", "activation/gelu.py", "tl_gelu")
        paths = self.check_unverified(p, report, "cuda", "tilelang_cuda",
                                      None if HAS_GPU else "TileLang needs a CUDA GPU")
        with open(paths["kernel"]) as f:
            kernel = f.read()
        self.assertIn("@T.prim_func", kernel)
        self.assertIn("T.Parallel(", kernel)


if __name__ == "__main__":
    unittest.main()
